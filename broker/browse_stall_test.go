package broker_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/broker/brokertest"
)

// TestBrowseStallsOnAQueueThatNeverDelivers: a single-active-consumer
// queue whose active consumer is someone else sends the pass nothing; the
// pass ends with ErrStalled (after 15 s), takes nothing, and every message
// is still there for the active consumer.
func TestBrowseStallsOnAQueueThatNeverDelivers(t *testing.T) {
	conn := brokertest.Dial(t, "")
	ch := brokertest.Channel(t)
	q := brokertest.Name(t, "sac")
	brokertest.DeclareQueue(t, ch, q, amqp.Table{"x-single-active-consumer": true})
	msgs := make([]amqp.Publishing, 20)
	for i := range msgs {
		msgs[i] = amqp.Publishing{MessageId: fmt.Sprintf("s-%02d", i), Body: []byte("x")}
	}
	brokertest.PublishMany(t, ch, "", q, msgs)
	// The active consumer, holding nothing (prefetch 1, never started
	// reading: the broker gives it one message and keeps the rest ready).
	other := brokertest.Channel(t)
	if err := other.Qos(1, 0, false); err != nil {
		t.Fatal(err)
	}
	if _, err := other.Consume(q, "active", false, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p, err := broker.OpenPass(ctx, conn, broker.PassOptions{Queue: q, Management: brokertest.Management(t)})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = p.Next(ctx)
	waited := time.Since(start)
	rep, cerr := p.Close(ctx)
	if !errors.Is(err, broker.ErrStalled) {
		t.Fatalf("Next = %v, want ErrStalled", err)
	}
	if waited > time.Minute/2 {
		t.Fatalf("stalled after %v: the wait is 15 s", waited)
	}
	if cerr != nil || rep.Taken != 0 {
		t.Fatalf("close: %+v, %v; want nothing taken", rep, cerr)
	}
	if err := other.Cancel("active", false); err != nil {
		t.Fatal(err)
	}
	if err := other.Close(); err != nil { // gives its one message back
		t.Fatal(err)
	}
	brokertest.WaitDepth(t, q, len(msgs), 30*time.Second)
}
