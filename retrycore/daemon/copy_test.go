package daemon

import (
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker"
)

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

// A transient message is copied persistent: a classic delay queue or
// parking lot would otherwise lose it at the broker's next restart. The
// headers, which record the producer's mode, are the caller's.
func TestCopyPublishingIsPersistentWhateverTheProducerSent(t *testing.T) {
	for _, mode := range []uint8{0, amqp.Transient, amqp.Persistent} {
		m := broker.Message{Properties: broker.Properties{MessageID: "m1", DeliveryMode: mode}, Body: []byte("body")}
		h := amqp.Table{"a": "b"}
		if pub := copyPublishing(m, h, "guest"); pub.DeliveryMode != amqp.Persistent || pub.Headers["a"] != "b" {
			t.Errorf("mode %d: copy has delivery mode %d, headers %v; want persistent (2) and the headers given", mode, pub.DeliveryMode, pub.Headers)
		}
		if m.Properties.DeliveryMode != mode {
			t.Errorf("mode %d: the message itself changed to %d", mode, m.Properties.DeliveryMode)
		}
	}
}
