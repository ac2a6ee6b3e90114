//go:build integration

package cli_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/broker/brokertest"
	"github.com/parkinglot/parkinglot/ui/cli/clitest"
)

// TestRecordedBodiesReadFilteredAndReplayedRaw: the bodies kombu
// (MessagePack, zlib under its compression header) and pika (gzip JSON)
// wrote, rejected into a parking lot by a consumer, are shown decoded,
// found by a plain search and a filter on a decoded field, and replayed
// as the bytes they were, properties and headers with them.
func TestRecordedBodiesReadFilteredAndReplayedRaw(t *testing.T) {
	ch := brokertest.Channel(t)
	work, lot, sink := brokertest.Name(t, "work"), brokertest.Name(t, "lot"), brokertest.Name(t, "sink")
	brokertest.DeclareQueue(t, ch, lot, nil)
	brokertest.DeclareQueue(t, ch, sink, nil)
	brokertest.DeclareQueue(t, ch, work, amqp.Table{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": lot})
	recorded := map[string]broker.Message{}
	for _, scenario := range []string{"kombu-msgpack-zlib", "pika-gzip-json"} {
		m := recording(t, scenario)
		recorded[scenario] = m
		hdrs := amqp.Table{}
		for k, v := range m.Headers {
			if !strings.HasPrefix(k, "x-") { // the broker writes its own x-death
				hdrs[k] = v
			}
		}
		brokertest.Publish(t, ch, "", work, amqp.Publishing{MessageId: scenario, ContentType: m.Properties.ContentType,
			ContentEncoding: m.Properties.ContentEncoding, DeliveryMode: amqp.Persistent, Headers: hdrs, Body: m.Body})
	}
	// A consumer rejects both: the broker dead-letters them into the lot.
	for range recorded {
		d := brokertest.MustGet(t, ch, work)
		if err := d.Reject(false); err != nil {
			t.Fatal(err)
		}
	}
	brokertest.WaitDepth(t, lot, 2, 15*time.Second)

	c := clitest.NewCLI(t)
	r := c.Run("", "show", lot, "kombu-msgpack-zlib")
	for _, want := range []string{"MessagePack (content_type application/x-msgpack), shown as JSON", "zlib-compressed (compression)", `"order_id": "4711"`} {
		if r.Code != 0 || !strings.Contains(r.Stdout, want) {
			t.Errorf("show kombu-msgpack-zlib: exit %d, no %q:\n%s%s", r.Code, want, r.Stdout, r.Stderr)
		}
	}
	r = c.Run("", "show", lot, "pika-gzip-json", "-o", "json")
	var shown struct {
		Decoded     map[string]any    `json:"decoded"`
		BodyReading map[string]string `json:"body_reading"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &shown); err != nil || shown.Decoded["order_id"] != "4711" || shown.BodyReading["compression"] != "gzip" {
		t.Errorf("show -o json: exit %d, %v: %s%s", r.Code, err, r.Stdout, r.Stderr)
	}
	// A plain search finds the order number inside both compressed bodies.
	r = c.Run("", "search", "4711", lot, "-o", "json")
	if r.Code != 0 || strings.Count(strings.TrimSpace(r.Stdout), "\n") != 1 {
		t.Errorf("search 4711: exit %d, want 2 matches:\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	r = c.Run("", "list", lot, "--filter", `decoded.amount > 1000 && decoded.customer.id == "C-77"`, "-o", "json")
	if r.Code != 0 || strings.Count(strings.TrimSpace(r.Stdout), "\n") != 1 {
		t.Errorf("list --filter on decoded fields: exit %d, want 2 lines:\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	// Replayed, each is the producer's bytes with its properties.
	r = c.Run("", "replay", lot, "--filter", `decoded.order_id == "4711"`, "--to", ":"+sink, "--yes")
	if r.Code != 0 {
		t.Fatalf("replay: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	brokertest.WaitDepth(t, lot, 0, 15*time.Second)
	for _, d := range brokertest.Drain(t, ch, sink) {
		m, ok := recorded[d.MessageId]
		if !ok {
			t.Errorf("sink holds %q", d.MessageId)
			continue
		}
		delete(recorded, d.MessageId)
		if !bytes.Equal(d.Body, m.Body) || d.ContentType != m.Properties.ContentType || d.ContentEncoding != m.Properties.ContentEncoding ||
			d.Headers["compression"] != m.Headers["compression"] {
			t.Errorf("%s replayed as %q %q %v, %d bytes; want the recorded bytes and properties", d.MessageId, d.ContentType, d.ContentEncoding, d.Headers["compression"], len(d.Body))
		}
	}
	if len(recorded) != 0 {
		t.Errorf("not replayed: %v", recorded)
	}
}

// recording is the parked message of testdata/frameworks/scenario.json.
func recording(t *testing.T, scenario string) broker.Message {
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
