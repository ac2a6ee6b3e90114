package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/replay"
	"github.com/parkinglot/parkinglot/retrycore"
)

func loadFramework(t *testing.T, scenario string) broker.Message {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "frameworks", scenario+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var rec struct {
		Message json.RawMessage `json:"message"`
	}
	if err := json.Unmarshal(data, &rec); err != nil {
		t.Fatal(err)
	}
	var m broker.Message
	if err := m.UnmarshalJSON(rec.Message); err != nil {
		t.Fatal(err)
	}
	return m
}

func shown(t *testing.T, m broker.Message) string {
	t.Helper()
	s := replay.Summarize(context.Background(), m, retrycore.OriginQuery{ParkingLot: "parked"})
	var b strings.Builder
	if err := WriteMessage(&b, nil, "parked", m, s, time.Now()); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// show prints rascal's nested table in full, one key a line, indented
// (it was cut at ~300 characters).
func TestShowNestedTableInFull(t *testing.T) {
	m := loadFramework(t, "rascal-republish-forward")
	out := shown(t, m)
	for _, want := range []string{
		"\n  rascal                       table     (",
		"\n    originalQueue              string    \"orders.process\"\n",
		"\n    originalExchange           string    \"orders\"\n",
		"\n      message                  string    \"order 1042: payment service unavailable\"\n",
		"\n      orders.process           table     (2 keys)\n",
		"\n        republished            int8      3\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("show lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "Delivered") {
		t.Errorf("show still counts deliveries as if they were attempts:\n%s", out)
	}
}

// The death history is newest first: x-death's own order when times tie
// (whole seconds), the newest entry the first of the array.
func TestShowDeathHistoryKeepsXDeathOrder(t *testing.T) {
	at := time.Unix(1714564800, 0)
	m := broker.Message{Headers: amqp.Table{
		"x-death": []any{
			amqp.Table{"queue": "orders.retry", "reason": "expired", "count": int64(1), "exchange": "", "routing-keys": []any{"orders.retry"}, "time": at},
			amqp.Table{"queue": "orders.main", "reason": "rejected", "count": int64(1), "exchange": "orders", "routing-keys": []any{"order.new"}, "time": at},
		},
		"x-delivery-count": int64(1), "x-acquired-count": int64(5),
	}}
	out := shown(t, m)
	i, j := strings.Index(out, "expired        orders.retry"), strings.Index(out, "rejected       orders.main")
	if i < 0 || j < 0 || i > j || !strings.Contains(out, "Death history (newest first)") {
		t.Errorf("death history not newest first in x-death's order:\n%s", out)
	}
	for _, want := range []string{
		"Counted   x-delivery-count 1  (failed deliveries on RabbitMQ 4.3",
		"Counted   x-acquired-count 5  (every hand-out, including parkinglot's browses)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("show lacks %q:\n%s", want, out)
		}
	}
}

// show prints a compressed or MessagePack body as the document it holds,
// saying what it undid; -o json adds the decoded document and how it was
// read beside the lossless body.
func TestShowReadsCompressedAndMessagePackBodies(t *testing.T) {
	for _, c := range []struct {
		scenario string
		want     []string
	}{
		{"kombu-msgpack-zlib", []string{
			"(zlib-compressed (compression): ",
			"(MessagePack (content_type application/x-msgpack), shown as JSON)\n",
			"\n  \"order_id\": \"4711\",\n", "\n    \"vip\": true\n", "\"signature\": \"AJ/+\"",
		}},
		{"pika-gzip-json", []string{
			"(gzip-compressed (content_encoding): ",
			"\n  \"order_id\": \"4711\",\n", "\n      \"sku\": \"A-1\",\n",
		}},
	} {
		m := loadFramework(t, c.scenario)
		out := shown(t, m)
		for _, w := range c.want {
			if !strings.Contains(out, w) {
				t.Errorf("%s: no %q in\n%s", c.scenario, w, out)
			}
		}
		line, err := MessageJSON(nil, "parked", m, replay.Summarize(context.Background(), m, retrycore.OriginQuery{ParkingLot: "parked"}))
		if err != nil {
			t.Fatal(err)
		}
		var got struct {
			Message struct {
				Body string `json:"body"`
			} `json:"message"`
			Decoded     map[string]any    `json:"decoded"`
			BodyReading map[string]string `json:"body_reading"`
		}
		if err := json.Unmarshal(line, &got); err != nil {
			t.Fatal(err)
		}
		if got.Decoded["order_id"] != "4711" || got.BodyReading["compression"] == "" || got.BodyReading["format"] == "" || got.Message.Body == "" {
			t.Errorf("%s: -o json %s", c.scenario, line)
		}
	}
}
