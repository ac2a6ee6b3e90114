//go:build integration

package replay_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker/brokertest"
)

// show prints properties, headers (x-last-error, x-retry-count first), the
// death history and the body: JSON pretty, binary as hex, huge cut at 64
// KiB; odd header types do not break it.
func TestShowBodiesAndHeaders(t *testing.T) {
	ch := brokertest.Channel(t)
	q := brokertest.Name(t, "dlq")
	brokertest.DeclareQueue(t, ch, q, nil)
	huge := bytes.Repeat([]byte("0123456789"), 16<<20/10)
	brokertest.PublishMany(t, ch, "", q, []amqp.Publishing{
		{MessageId: "json", ContentType: "application/json", Body: []byte(`{"a":{"b":1}}`), Headers: amqp.Table{
			"a-first": "x", "x-retry-count": int8(2), "x-last-error": "boom", "x-death": "not an array",
			"odd": amqp.Table{"deep": []any{amqp.Decimal{Scale: 2, Value: 1234}, nil, float32(1.5)}}, "bad": "\xff\xfe"}},
		{MessageId: "bin", ContentType: "application/octet-stream", Body: []byte{0, 1, 2, 0xff}},
		{MessageId: "huge", Body: huge},
	})
	c := newCLI(t)
	r := c.must(0, "", "show", q, "json")
	if !strings.Contains(r.stdout, "{\n  \"a\": {\n    \"b\": 1\n  }\n}") {
		t.Errorf("JSON body not pretty-printed:\n%s", r.stdout)
	}
	iErr, iCount, iFirst := strings.Index(r.stdout, "  x-last-error"), strings.Index(r.stdout, "  x-retry-count"), strings.Index(r.stdout, "  a-first")
	if iErr < 0 || iCount < iErr || iFirst < iCount {
		t.Errorf("headers not ordered x-last-error, x-retry-count, then the rest:\n%s", r.stdout)
	}
	if !strings.Contains(r.stdout, "x-death is a string") {
		t.Errorf("a malformed x-death is not reported:\n%s", r.stdout)
	}
	r = c.must(0, "", "show", q, "bin")
	if !strings.Contains(r.stdout, "00000000  00 01 02 ff") {
		t.Errorf("binary body not a hex dump:\n%s", r.stdout)
	}
	r = c.must(0, "", "show", q, "huge")
	if !strings.Contains(r.stdout, "first 65536 of 16777210 bytes shown") || len(r.stdout) > 100<<10 {
		t.Errorf("16 MiB body: %d bytes printed", len(r.stdout))
	}
	r = c.must(0, "", "-o", "json", "show", q, "huge")
	var v struct {
		Message struct {
			Body string `json:"body"`
		} `json:"message"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &v); err != nil || len(v.Message.Body) != len(huge) {
		t.Errorf("show -o json of 16 MiB: %v, %d bytes", err, len(v.Message.Body))
	}
	r = c.must(1, "", "show", q, "nope")
	if strings.TrimSpace(r.stderr) != `parkinglot: no message "nope" in queue "`+q+`" (3 messages looked at)` {
		t.Errorf("missing id: %q", r.stderr)
	}
	brokertest.WaitDepth(t, q, 3, 15*time.Second)
}

func TestListLimitAndQueues(t *testing.T) {
	ch := brokertest.Channel(t)
	q := brokertest.Name(t, "orders.dlq")
	brokertest.DeclareQueue(t, ch, q, nil)
	parkPlain(t, ch, q, 30)
	c := newCLI(t)
	r := c.must(0, "", "list", q, "--limit", "5")
	if lines := nonEmptyLines(r.stdout); len(lines) != 6 || !strings.HasPrefix(lines[0], "ID ") || !strings.HasPrefix(lines[1], idOf(0)) {
		t.Errorf("list --limit 5:\n%s", r.stdout)
	}
	brokertest.WaitDepth(t, q, 30, 15*time.Second)
	r = c.must(0, "", "queues")
	found := false
	for _, l := range nonEmptyLines(r.stdout) {
		if strings.Contains(l, " "+q+" ") {
			found = strings.HasPrefix(l, "*") // depths lag: the API refreshes them every few seconds
		}
	}
	if !found {
		t.Errorf("queues does not mark %s as a parking lot:\n%s", q, r.stdout)
	}
	r = c.must(0, "", "-o", "json", "queues")
	for _, l := range nonEmptyLines(r.stdout) {
		var row struct {
			Name       string `json:"name"`
			ParkingLot bool   `json:"parking_lot"`
		}
		if err := json.Unmarshal([]byte(l), &row); err != nil {
			t.Fatalf("queues -o json line %q: %v", l, err)
		}
	}
}
