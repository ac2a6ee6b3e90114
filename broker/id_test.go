package broker

import (
	"regexp"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

var contentIDForm = regexp.MustCompile(`^sha256:[0-9a-f]{12}$`)

func TestIDPrefersMessageID(t *testing.T) {
	m := Message{Properties: Properties{MessageID: "order-42"}, Body: []byte("x")}
	if got := m.ID(); got != "order-42" {
		t.Fatalf("ID() = %q, want the message_id", got)
	}
	m.Properties.MessageID = ""
	if got := m.ID(); !contentIDForm.MatchString(got) || got != ContentID(m.Body, m.Headers) {
		t.Fatalf("ID() without message_id = %q, want the content id", got)
	}
}

func TestContentID(t *testing.T) {
	headers := amqp.Table{
		"x-death":        []any{amqp.Table{"count": int64(1), "queue": "q", "time": time.Unix(1714564800, 0)}},
		"x-last-error":   "boom",
		"x-retry-count":  int32(2),
		"x-parked-at":    time.Unix(1714564800, 0),
		"binary":         []byte{0xff},
		"x-first-failed": time.Unix(1714564700, 0),
		"tenant-shard":   int32(2),
	}
	body := []byte(`{"order":42}`)
	base := ContentID(body, headers)
	if !contentIDForm.MatchString(base) {
		t.Fatalf("content id %q: want sha256: and 12 hex digits", base)
	}

	same := func(name string, b []byte, h amqp.Table) {
		t.Helper()
		if got := ContentID(b, h); got != base {
			t.Errorf("%s: id %s, want %s", name, got, base)
		}
	}
	differs := func(name string, b []byte, h amqp.Table) {
		t.Helper()
		if got := ContentID(b, h); got == base {
			t.Errorf("%s: id unchanged %s", name, got)
		}
	}
	same("again", body, headers)
	same("clone", append([]byte(nil), body...), CloneTable(headers))

	// A quorum queue adds x-delivery-count on every give-back; the id of a
	// message must not change because it was browsed.
	redelivered := CloneTable(headers)
	redelivered["x-delivery-count"] = int64(1)
	same("x-delivery-count 1", body, redelivered)
	redelivered["x-delivery-count"] = int64(7)
	same("x-delivery-count 7", body, redelivered)

	differs("other body", []byte(`{"order":43}`), headers)
	differs("body plus a byte", append(append([]byte(nil), body...), ' '), headers)
	other := CloneTable(headers)
	other["tenant-shard"] = int32(3)
	differs("other header value", body, other)
	retyped := CloneTable(headers)
	retyped["tenant-shard"] = int64(2) // same number, other AMQP type: another message
	differs("other header type", body, retyped)
	differs("no headers", body, nil)
	// Body and headers are separated, so bytes cannot move between them.
	if ContentID([]byte("a"), nil) == ContentID(nil, amqp.Table{"a": ""}) {
		t.Error("body and headers run together")
	}
}

// One message keeps one id from its first handling to its replay: every
// header the retry, park, dead-letter and replay path adds or changes is
// left out (transitHeaders), while the headers it came with count.
func TestContentIDStableAcrossTheHeadersAddedOnTheWay(t *testing.T) {
	body := []byte("payload")
	first := amqp.Table{"tenant": "acme", "attempt-budget": int32(5)}
	want := ContentID(body, first)
	at := time.Unix(1764806707, 0)
	way := CloneTable(first)
	for k, v := range map[string]any{
		"x-retry-count": int32(3), "x-last-error": "db down", "x-original-exchange": "orders",
		"x-original-routing-key": "order.new", "x-original-queue": "orders.main", "x-first-failed-at": at,
		"x-parked-at": at, "x-failure-kind": "retries-exhausted",
		"x-death":             []any{amqp.Table{"queue": "orders.retry.5s", "reason": "expired", "count": int64(1), "time": at}},
		"x-first-death-queue": "orders.retry.5s", "x-first-death-reason": "expired", "x-first-death-exchange": "orders.retry",
		"x-last-death-queue": "orders.retry.5m", "x-last-death-reason": "expired", "x-last-death-exchange": "orders.retry",
		"x-delivery-count": int64(2), "x-acquired-count": int64(4),
		"x-replay-count": int32(1), "x-replayed-at": at, "x-replay-id": "r-1",
	} {
		way[k] = v
		if got := ContentID(body, way); got != want {
			t.Fatalf("adding %s changed the id: %s, want %s", k, got, want)
		}
	}
	if ContentID(body, amqp.Table{"tenant": "acme"}) == want {
		t.Fatal("a header the message came with does not count")
	}
	if (Message{Headers: way, Body: body}).ID() != want {
		t.Fatal("ID() of the parked copy differs from the content id of the first delivery")
	}
}

// TestContentIDMapOrder: Go maps iterate in random order; the id must not.
func TestContentIDMapOrder(t *testing.T) {
	h := amqp.Table{}
	for _, k := range []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"} {
		h[k] = k
	}
	want := ContentID(nil, h)
	for i := 0; i < 50; i++ {
		if got := ContentID(nil, CloneTable(h)); got != want {
			t.Fatalf("id changed between calls: %s vs %s", got, want)
		}
	}
}

// TestIDCeleryTask: a Celery task (a "task" header) without a message_id
// is known by its task id: the "id" header, else the correlation_id.
func TestIDCeleryTask(t *testing.T) {
	body := []byte(`[[1], {}, {}]`)
	m := Message{Headers: amqp.Table{"task": "orders.charge", "id": "t-1", "retries": int32(3)},
		Properties: Properties{CorrelationID: "t-corr"}, Body: body}
	if got := m.ID(); got != "t-1" {
		t.Errorf("ID() = %q, want the id header", got)
	}
	m.Headers["id"] = []byte("t-bytes")
	if got := m.ID(); got != "t-bytes" {
		t.Errorf("ID() = %q, want the id header as text", got)
	}
	delete(m.Headers, "id")
	if got := m.ID(); got != "t-corr" {
		t.Errorf("ID() without an id header = %q, want the correlation_id", got)
	}
	m.Properties.MessageID = "mid"
	if got := m.ID(); got != "mid" {
		t.Errorf("ID() = %q, want the message_id first", got)
	}
	// Without a task header, an "id" header is nobody's task id.
	plain := Message{Headers: amqp.Table{"id": "t-1"}, Properties: Properties{CorrelationID: "c"}, Body: body}
	if got := plain.ID(); !contentIDForm.MatchString(got) {
		t.Errorf("ID() of a non-Celery message = %q, want a content id", got)
	}
	none := Message{Headers: amqp.Table{"task": "orders.charge"}, Body: body}
	if got := none.ID(); !contentIDForm.MatchString(got) {
		t.Errorf("ID() of a task without ids = %q, want a content id", got)
	}
}

// TestContentIDLeavesOutDeliveryCounters: a quorum queue adds
// x-delivery-count and, from RabbitMQ 4.3, x-acquired-count to each
// delivery (a browse's too); an id-less message must keep its id.
func TestContentIDLeavesOutDeliveryCounters(t *testing.T) {
	body := []byte(`{"order":42}`)
	base := ContentID(body, amqp.Table{"x-last-error": "boom"})
	for _, h := range []amqp.Table{
		{"x-last-error": "boom", "x-delivery-count": int64(2)},
		{"x-last-error": "boom", "x-acquired-count": int64(5)},
		{"x-last-error": "boom", "x-delivery-count": int64(1), "x-acquired-count": int64(7)},
	} {
		if got := ContentID(body, h); got != base {
			t.Errorf("headers %v: id %s, want %s", h, got, base)
		}
	}
}
