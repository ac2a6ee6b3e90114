package brokertest

import (
	"fmt"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// Parked says how ParkByDeliveryLimit filled a parking lot.
type Parked struct {
	// Reason is the x-death reason the broker parked the messages with:
	// "delivery_limit" where the work queue has a default delivery limit
	// (4.0+), "rejected" where it has none (3.x).
	Reason string
	// IDs are the message ids in the order they were published.
	IDs []string
}

// ParkByDeliveryLimit fills a new quorum parking lot the way a poison
// message reaches one in production when nobody configured anything: a
// quorum work queue at the broker's defaults dead-letters to the lot (a
// quorum queue at its defaults too), n messages are published to the work
// queue, and a consumer rejects each with requeue until the broker parks
// it for its delivery limit (20 by default from 4.0; RabbitMQ 4.3 carries
// the count into the lot). A version without a default limit (3.x) would
// redeliver forever, so there the consumer rejects without requeue and the
// broker parks each at once. Both queues are deleted when the test ends.
func ParkByDeliveryLimit(t testing.TB, lot string, n int) Parked {
	t.Helper()
	ch := Channel(t)
	DeclareQueue(t, ch, lot, amqp.Table{"x-queue-type": "quorum"})
	work := lot + ".work"
	DeclareQueue(t, ch, work, amqp.Table{
		"x-queue-type":              "quorum",
		"x-dead-letter-exchange":    "",
		"x-dead-letter-routing-key": lot,
	})
	out := Parked{Reason: "rejected"}
	requeue := Version(t).AtLeast(4, 0, 0)
	if requeue {
		out.Reason = "delivery_limit"
	}
	msgs := make([]amqp.Publishing, n)
	for i := range msgs {
		id := fmt.Sprintf("poison-%05d", i)
		out.IDs = append(out.IDs, id)
		msgs[i] = amqp.Publishing{
			MessageId: id, DeliveryMode: amqp.Persistent, ContentType: "application/json",
			Timestamp: time.Now().UTC().Truncate(time.Second),
			Headers:   amqp.Table{"x-last-error": "cannot parse amount of " + id, "tenant": "acme"},
			Body:      []byte(fmt.Sprintf(`{"payment":%d,"amount":"12,50"}`, i)),
		}
	}
	PublishMany(t, ch, "", work, msgs)

	rejecter := RawDial(t, "reject "+t.Name())
	defer rejecter.Close()
	rch, err := rejecter.Channel()
	if err != nil {
		t.Fatalf("open channel: %v", err)
	}
	if err := rch.Qos(500, 0, false); err != nil {
		t.Fatalf("qos: %v", err)
	}
	deliveries, err := rch.Consume(work, "", false, false, false, false, nil)
	if err != nil {
		t.Fatalf("consume %s: %v", work, err)
	}
	go func() {
		for d := range deliveries {
			_ = d.Reject(requeue)
		}
	}()
	WaitDepth(t, lot, n, 5*time.Minute)
	return out
}

// DLXLot declares a parking lot fed as most are: a work queue dead-letters
// into a fanout exchange bound to the lot (so a tail can tap the exchange).
// It returns the exchange, the lot and the work queue; all are deleted
// when the test ends.
func DLXLot(t testing.TB, ch *amqp.Channel) (dlx, lot, work string) {
	t.Helper()
	dlx, lot, work = Name(t, "dlx"), Name(t, "lot"), Name(t, "work")
	DeclareExchange(t, ch, dlx, "fanout")
	DeclareQueue(t, ch, lot, nil)
	if err := ch.QueueBind(lot, "", dlx, false, nil); err != nil {
		t.Fatal(err)
	}
	DeclareQueue(t, ch, work, amqp.Table{"x-dead-letter-exchange": dlx})
	return dlx, lot, work
}
