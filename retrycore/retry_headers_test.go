package retrycore

import (
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

var testFailure = Failure{Exchange: "main.exchange", RoutingKey: "payment.execute", Queue: "payment.main.queue", Err: "db down\n  at line 3", DeliveryMode: amqp.Persistent}

func TestRetryHeadersOnFirstFailure(t *testing.T) {
	now := time.Unix(1700000000, 0)
	in := amqp.Table{"tenant": "acme", HeaderDeliveryCount: int64(2)}
	h := RetryHeaders(in, testFailure, 1, now)

	want := amqp.Table{
		"tenant":                 "acme",
		HeaderRetryCount:         int32(1),
		HeaderLastError:          "db down",
		HeaderOriginalExchange:   "main.exchange",
		HeaderOriginalRoutingKey: "payment.execute",
		HeaderOriginalQueue:      "payment.main.queue",
		HeaderFirstFailedAt:      now,
	}
	assertTable(t, h, want)
	if _, ok := in[HeaderRetryCount]; ok {
		t.Fatal("retryHeaders changed its input")
	}
	if err := h.Validate(); err != nil {
		t.Fatalf("headers are not publishable: %v", err)
	}
}

func TestRetryHeadersKeepOriginAndFirstFailure(t *testing.T) {
	first := time.Unix(1600000000, 0)
	in := amqp.Table{
		HeaderRetryCount:         int64(1), // any integer type is read; int32 is written
		HeaderOriginalExchange:   "orders.exchange",
		HeaderOriginalRoutingKey: "orders.created",
		HeaderOriginalQueue:      "orders.queue",
		HeaderFirstFailedAt:      first,
		HeaderLastError:          "old error",
		HeaderDeath:              []any{amqp.Table{"queue": "payment.retry.15s", "reason": "expired", "count": int64(1)}},
	}
	// On a later attempt the delivery comes from the dead-letter exchange;
	// the recorded origin must survive.
	f := Failure{Exchange: "main.exchange", RoutingKey: "payment.execute", Queue: "payment.main.queue", Err: "new error"}
	h := RetryHeaders(in, f, 2, time.Unix(1700000000, 0))
	if h[HeaderRetryCount] != int32(2) {
		t.Fatalf("x-retry-count = %#v, want int32(2)", h[HeaderRetryCount])
	}
	for k, want := range map[string]any{
		HeaderOriginalExchange: "orders.exchange", HeaderOriginalRoutingKey: "orders.created",
		HeaderOriginalQueue: "orders.queue", HeaderFirstFailedAt: first, HeaderLastError: "new error",
	} {
		if h[k] != want {
			t.Errorf("%s = %#v, want %#v", k, h[k], want)
		}
	}
	if _, ok := h[HeaderDeath]; !ok {
		t.Error("x-death must be kept on a retry copy")
	}
}

func TestParkHeaders(t *testing.T) {
	now := time.Unix(1700000000, 0)
	in := amqp.Table{HeaderRetryCount: int32(3)}
	h := ParkHeaders(in, testFailure, 3, KindRetriesExhausted, now)
	assertTable(t, h, amqp.Table{
		HeaderRetryCount:         int32(3),
		HeaderLastError:          "db down",
		HeaderOriginalExchange:   "main.exchange",
		HeaderOriginalRoutingKey: "payment.execute",
		HeaderOriginalQueue:      "payment.main.queue",
		HeaderFirstFailedAt:      now,
		HeaderParkedAt:           now,
		HeaderFailureKind:        KindRetriesExhausted,
	})
	// What retrycore writes, retrycore reads back: 3 retries, 4 handler runs.
	f := Decode(h)
	if f.Attempts != 4 || f.FailureKind != KindRetriesExhausted || f.Error != "db down" || !f.ParkedAt.Equal(now) {
		t.Fatalf("Decode of park headers = %+v", f)
	}
}

func TestParkHeadersPermanentOnFirstFailure(t *testing.T) {
	h := ParkHeaders(nil, testFailure, 0, KindPermanent, time.Unix(1, 0))
	if h[HeaderRetryCount] != int32(0) || h[HeaderFailureKind] != KindPermanent {
		t.Fatalf("got %v", h)
	}
}

func TestRetryHeadersBoundTheErrorText(t *testing.T) {
	f := testFailure
	f.Err = strings.Repeat("é", 5000)
	h := RetryHeaders(nil, f, 1, time.Unix(1, 0))
	if s := h[HeaderLastError].(string); len(s) > MaxErrorLen {
		t.Fatalf("x-last-error is %d bytes, want <= %d", len(s), MaxErrorLen)
	}
}

func TestRetryHeadersClampTheCount(t *testing.T) {
	h := RetryHeaders(nil, testFailure, 1<<40, time.Unix(1, 0))
	if h[HeaderRetryCount] != int32(1<<31-1) {
		t.Fatalf("x-retry-count = %#v", h[HeaderRetryCount])
	}
}

func assertTable(t *testing.T, got, want amqp.Table) {
	t.Helper()
	for k, w := range want {
		g, ok := got[k]
		if !ok {
			t.Errorf("header %s missing", k)
			continue
		}
		if gt, ok := g.(time.Time); ok {
			if wt, _ := w.(time.Time); !gt.Equal(wt) {
				t.Errorf("%s = %v, want %v", k, gt, wt)
			}
			continue
		}
		if g != w {
			t.Errorf("%s = %#v, want %#v", k, g, w)
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("unexpected header %s = %#v", k, got[k])
		}
	}
}

// A message published to the default exchange records "" as its original
// exchange at its first failure; a later failure, which the delay queue
// dead-lettered through another exchange, keeps it (else the pair names an
// exchange that never routed that key, and a replay comes back unroutable).
func TestRetryHeadersKeepTheDefaultExchangeAsOrigin(t *testing.T) {
	now := time.Unix(1700000000, 0)
	first := RetryHeaders(amqp.Table{}, Failure{Exchange: "", RoutingKey: "payment.main.queue", Queue: "payment.main.queue", Err: "db down"}, 1, now)
	later := ParkHeaders(first, Failure{Exchange: "main.exchange", RoutingKey: "payment.main.queue", Queue: "payment.main.queue", Err: "db down"}, 3, KindRetriesExhausted, now)
	if ex, key := later[HeaderOriginalExchange], later[HeaderOriginalRoutingKey]; ex != "" || key != "payment.main.queue" {
		t.Errorf("origin %q / %q, want the default exchange and payment.main.queue", ex, key)
	}
}

// A copy is persistent whatever the producer sent; a producer's other mode
// is recorded at the first failure and survives the copy's trip through a
// delay tier, where it comes back persistent.
func TestCopiesRecordTheProducersDeliveryModeUnlessPersistent(t *testing.T) {
	now := time.Unix(1700000000, 0)
	for _, c := range []struct {
		name string
		mode uint8
		want any // x-original-delivery-mode; nil: absent
	}{
		{"persistent", amqp.Persistent, nil},
		{"transient", amqp.Transient, int32(1)},
		{"none set", 0, int32(0)},
		{"another number", 7, int32(7)},
	} {
		f := testFailure
		f.DeliveryMode = c.mode
		retry := RetryHeaders(amqp.Table{"tenant": "acme"}, f, 1, now)
		park := ParkHeaders(amqp.Table{"tenant": "acme"}, f, 0, KindPermanent, now)
		for name, h := range map[string]amqp.Table{"retry": retry, "park": park} {
			if got, ok := h[HeaderOriginalDeliveryMode]; got != c.want || ok != (c.want != nil) {
				t.Errorf("%s, %s copy: %s = %#v, want %#v", c.name, name, HeaderOriginalDeliveryMode, got, c.want)
			}
			if err := h.Validate(); err != nil {
				t.Errorf("%s, %s copy: not publishable: %v", c.name, name, err)
			}
		}
		// Back from the delay tier as the persistent copy it was sent as.
		later := f
		later.DeliveryMode = CopyDeliveryMode
		again := ParkHeaders(retry, later, 1, KindRetriesExhausted, now)
		if got := again[HeaderOriginalDeliveryMode]; got != c.want {
			t.Errorf("%s: after a retry %s = %#v, want %#v", c.name, HeaderOriginalDeliveryMode, got, c.want)
		}
	}
	if CopyDeliveryMode != amqp.Persistent {
		t.Fatalf("copies are sent with delivery mode %d, want persistent (2)", CopyDeliveryMode)
	}
}

// A transient delivery tells the truth about itself: a header it carries
// from elsewhere does not override it.
func TestATransientDeliveryOverridesARecordedMode(t *testing.T) {
	f := testFailure
	f.DeliveryMode = amqp.Transient
	h := RetryHeaders(amqp.Table{HeaderOriginalDeliveryMode: int32(0)}, f, 1, time.Unix(1, 0))
	if got := h[HeaderOriginalDeliveryMode]; got != int32(1) {
		t.Fatalf("%s = %#v, want int32(1)", HeaderOriginalDeliveryMode, got)
	}
}

func TestRestoreDeliveryMode(t *testing.T) {
	for _, c := range []struct {
		name   string
		header any // nil: absent
		mode   uint8
		want   uint8
	}{
		{"no header keeps the message's", nil, amqp.Persistent, amqp.Persistent},
		{"no header, transient", nil, amqp.Transient, amqp.Transient},
		{"transient", int32(1), amqp.Persistent, amqp.Transient},
		{"none set", int32(0), amqp.Persistent, 0},
		{"any integer type", uint8(1), amqp.Persistent, amqp.Transient},
		{"int64", int64(1), amqp.Persistent, amqp.Transient},
		{"decimal text", "1", amqp.Persistent, amqp.Transient},
		{"persistent", int32(2), amqp.Persistent, amqp.Persistent},
		{"out of range", int32(300), amqp.Persistent, amqp.Persistent},
		{"negative", int32(-1), amqp.Persistent, amqp.Persistent},
		{"not a number", "transient", amqp.Persistent, amqp.Persistent},
	} {
		h := amqp.Table{"tenant": "acme"}
		if c.header != nil {
			h[HeaderOriginalDeliveryMode] = c.header
		}
		if got := RestoreDeliveryMode(h, c.mode); got != c.want {
			t.Errorf("%s: mode %d, want %d", c.name, got, c.want)
		}
		if _, ok := h[HeaderOriginalDeliveryMode]; ok {
			t.Errorf("%s: the copy still carries %s", c.name, HeaderOriginalDeliveryMode)
		}
		if h["tenant"] != "acme" || len(h) != 1 {
			t.Errorf("%s: other headers changed: %v", c.name, h)
		}
	}
	if RestoreDeliveryMode(nil, amqp.Transient) != amqp.Transient {
		t.Error("no headers: the message's mode")
	}
}

// What the daemon records, a replay gives back.
func TestRestoreDeliveryModeUndoesTheParkCopy(t *testing.T) {
	for _, mode := range []uint8{0, amqp.Transient, amqp.Persistent} {
		f := testFailure
		f.DeliveryMode = mode
		h := ParkHeaders(nil, f, 0, KindPermanent, time.Unix(1, 0))
		if got := RestoreDeliveryMode(h, CopyDeliveryMode); got != mode {
			t.Errorf("parked with mode %d, restored %d", mode, got)
		}
	}
}
