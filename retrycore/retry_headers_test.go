package retrycore

import (
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker"
)

var testFailure = failure{Exchange: "main.exchange", RoutingKey: "payment.execute", Queue: "payment.main.queue", Err: "db down\n  at line 3"}

func TestRetryHeadersOnFirstFailure(t *testing.T) {
	now := time.Unix(1700000000, 0)
	in := amqp.Table{"tenant": "acme", HeaderDeliveryCount: int64(2)}
	h := retryHeaders(in, testFailure, 1, now)

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
	f := failure{Exchange: "main.exchange", RoutingKey: "payment.execute", Queue: "payment.main.queue", Err: "new error"}
	h := retryHeaders(in, f, 2, time.Unix(1700000000, 0))
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
	h := parkHeaders(in, testFailure, 3, KindRetriesExhausted, now)
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
	h := parkHeaders(nil, testFailure, 0, KindPermanent, time.Unix(1, 0))
	if h[HeaderRetryCount] != int32(0) || h[HeaderFailureKind] != KindPermanent {
		t.Fatalf("got %v", h)
	}
}

func TestRetryHeadersBoundTheErrorText(t *testing.T) {
	f := testFailure
	f.Err = strings.Repeat("é", 5000)
	h := retryHeaders(nil, f, 1, time.Unix(1, 0))
	if s := h[HeaderLastError].(string); len(s) > MaxErrorLen {
		t.Fatalf("x-last-error is %d bytes, want <= %d", len(s), MaxErrorLen)
	}
}

func TestRetryHeadersClampTheCount(t *testing.T) {
	h := retryHeaders(nil, testFailure, 1<<40, time.Unix(1, 0))
	if h[HeaderRetryCount] != int32(1<<31-1) {
		t.Fatalf("x-retry-count = %#v", h[HeaderRetryCount])
	}
}

func TestCopyPublishingKeepsPropertiesButExpiration(t *testing.T) {
	m := broker.Message{
		Properties: broker.Properties{
			ContentType: "application/json", ContentEncoding: "gzip", DeliveryMode: 2, Priority: 4,
			CorrelationID: "c1", ReplyTo: "r", Expiration: "60000", MessageID: "m1",
			Timestamp: time.Unix(1600000000, 0), Type: "t", UserID: "guest", AppID: "app",
		},
		Body: []byte("body"),
	}
	h := amqp.Table{"a": "b"}
	pub := copyPublishing(m, h, "guest")
	want := amqp.Publishing{
		Headers: h, ContentType: "application/json", ContentEncoding: "gzip", DeliveryMode: 2, Priority: 4,
		CorrelationId: "c1", ReplyTo: "r", MessageId: "m1", Timestamp: time.Unix(1600000000, 0),
		Type: "t", UserId: "guest", AppId: "app", Body: []byte("body"),
	}
	if pub.Expiration != "" || pub.ContentType != want.ContentType || pub.ContentEncoding != want.ContentEncoding ||
		pub.DeliveryMode != 2 || pub.Priority != 4 || pub.CorrelationId != "c1" || pub.ReplyTo != "r" ||
		pub.MessageId != "m1" || !pub.Timestamp.Equal(want.Timestamp) || pub.Type != "t" || pub.UserId != "guest" ||
		pub.AppId != "app" || string(pub.Body) != "body" || pub.Headers["a"] != "b" {
		t.Fatalf("copy = %+v, want %+v (no expiration)", pub, want)
	}
	if other := copyPublishing(m, h, "parkinglot"); other.UserId != "" {
		t.Fatalf("a user_id other than ours would be refused by the broker; got %q", other.UserId)
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
