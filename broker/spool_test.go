//go:build integration

package broker_test

import (
	"reflect"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/broker/brokertest"
)

// TestSpoolGivesBackWhatWasDelivered: a delivery with every header type,
// a header name and values that are not UTF-8 (which the JSON form cannot
// carry), every property and a binary body comes back from the spool
// exactly as amqp091-go decoded it, whether it is still pending or
// already written to the file.
func TestSpoolGivesBackWhatWasDelivered(t *testing.T) {
	ch := brokertest.Channel(t)
	q := brokertest.Name(t, "q")
	brokertest.DeclareQueue(t, ch, q, nil)
	h := wireHeaders()
	h["name-\xff"] = "a header name that is not UTF-8"
	brokertest.Publish(t, ch, "", q, amqp.Publishing{
		Headers: h, ContentType: "image/jpeg", ContentEncoding: "identity",
		DeliveryMode: amqp.Persistent, Priority: 5, CorrelationId: "corr", ReplyTo: "replies",
		Expiration: "600000", MessageId: "sp-\xfe", Timestamp: time.Unix(1714564800, 0),
		Type: "photo", UserId: "guest", AppId: "spool", Body: []byte{0xff, 0xd8, 0, 1},
	})
	brokertest.Publish(t, ch, "", q, amqp.Publishing{Body: []byte{}}) // no headers, no properties, empty body
	delivered := []broker.Message{broker.FromDelivery(get(t, ch, q)), broker.FromDelivery(get(t, ch, q))}
	delivered[1].Redelivered = true

	s, err := broker.NewSpool(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	check := func(when string) {
		t.Helper()
		for i, want := range delivered {
			got, err := s.Get(i)
			if err != nil {
				t.Fatalf("%s: Get(%d): %v", when, i, err)
			}
			want.DeliveryTag = 0 // a spooled copy is not a live delivery
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s: message %d changed in the spool:\n want %#v\n got  %#v", when, i, want, got)
			}
		}
	}
	for _, m := range delivered {
		if _, err := s.Append(m); err != nil {
			t.Fatal(err)
		}
	}
	check("pending")
	// Enough more to make the spool write its records to the file.
	big := broker.Message{Body: make([]byte, 64<<10)}
	for i := 0; i < 8; i++ {
		if _, err := s.Append(big); err != nil {
			t.Fatal(err)
		}
	}
	check("written")
	if got, err := s.Get(9); err != nil || len(got.Body) != 64<<10 {
		t.Fatalf("Get(9) = %d bytes, %v", len(got.Body), err)
	}
	if s.Len() != 10 {
		t.Errorf("Len() = %d, want 10", s.Len())
	}
}

// TestSpoolRefusesWhatAMQPCannotCarry: a Go value with no AMQP type is an
// error for that message, and the spool stays usable.
func TestSpoolRefusesWhatAMQPCannotCarry(t *testing.T) {
	s, err := broker.NewSpool(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Append(broker.Message{Headers: amqp.Table{"u64": uint64(1)}}); err == nil {
		t.Fatal("a uint64 header was spooled")
	}
	i, err := s.Append(broker.Message{Body: []byte("ok"), Headers: amqp.Table{"n": int32(1)}})
	if err != nil || i != 0 {
		t.Fatalf("Append after a refused message = %d, %v", i, err)
	}
	if m, err := s.Get(0); err != nil || string(m.Body) != "ok" {
		t.Fatalf("Get(0) = %q, %v", m.Body, err)
	}
}
