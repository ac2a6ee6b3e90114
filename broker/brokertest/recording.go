package brokertest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker"
)

// Recording is the parked message of testdata/frameworks/scenario.json,
// as its framework or producer wrote it.
func Recording(t testing.TB, scenario string) broker.Message {
	t.Helper()
	root, err := ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(root, "testdata", "frameworks", scenario+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var rec struct {
		Message broker.Message `json:"message"`
	}
	if err := json.Unmarshal(data, &rec); err != nil {
		t.Fatalf("%s: %v", scenario, err)
	}
	return rec.Message
}

// Producing is m as its producer published it, id as its message id: its
// properties, body and its own headers, not the broker's x- ones.
func Producing(m broker.Message, id string) amqp.Publishing {
	hdrs := amqp.Table{}
	for k, v := range m.Headers {
		if !strings.HasPrefix(k, "x-") {
			hdrs[k] = v
		}
	}
	return amqp.Publishing{MessageId: id, ContentType: m.Properties.ContentType, ContentEncoding: m.Properties.ContentEncoding,
		Type: m.Properties.Type, DeliveryMode: amqp.Persistent, Headers: hdrs, Body: m.Body}
}

// ParkByReject parks msgs into lot as a failing consumer does: they are
// published to a work queue that dead-letters into lot, and a consumer
// rejects each (requeue false). It returns, once lot holds them all, the
// work queue: the messages' origin (x-death names it, by the default
// exchange).
func ParkByReject(t testing.TB, ch *amqp.Channel, lot string, msgs ...amqp.Publishing) string {
	t.Helper()
	before := Depth(t, ch, lot)
	work := Name(t, "work")
	DeclareQueue(t, ch, work, amqp.Table{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": lot})
	for _, m := range msgs {
		Publish(t, ch, "", work, m)
	}
	for range msgs {
		if err := MustGet(t, ch, work).Reject(false); err != nil {
			t.Fatal(err)
		}
	}
	WaitDepth(t, lot, before+len(msgs), 15*time.Second)
	return work
}
