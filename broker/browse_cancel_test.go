//go:build integration

package broker_test

import (
	"context"
	"errors"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/broker/brokertest"
)

// TestAnAckAfterTheBrokerEndedThePassIsNotDone: a pass holds three
// messages past the queue's consumer timeout (x-consumer-timeout 1 s). On
// RabbitMQ 4.3 the broker cancels the quorum consumer and takes the
// messages back; an ack sent after would be dropped without a word, so
// the pass refuses it (ErrConsumerCancelled) and the three are still in
// the queue: a replay reports them not removed instead of done. 4.0
// closes the channel on its minute tick (the ack fails too); 3.10 has no
// per-queue timeout: the ack removes them.
func TestAnAckAfterTheBrokerEndedThePassIsNotDone(t *testing.T) {
	t.Parallel() // up to 90 s on 4.0, whose check runs once a minute
	v := brokertest.Version(t)
	q := brokertest.Name(t, "q")
	ch := brokertest.Channel(t)
	brokertest.DeclareQueue(t, ch, q, amqp.Table{"x-queue-type": "quorum", "x-consumer-timeout": int32(1000)})
	for _, id := range []string{"a", "b", "c"} {
		brokertest.Publish(t, ch, "", q, amqp.Publishing{MessageId: id, Body: []byte(id)})
	}
	brokertest.WaitDepth(t, q, 3, 10*time.Second)
	mgmt := brokertest.Management(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	p, err := broker.OpenPass(ctx, brokertest.Dial(t, "parkinglot-test "+t.Name()), broker.PassOptions{Queue: q, Management: mgmt})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(context.Background())
	var held []*broker.Held
	for range 3 {
		h, err := p.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, h)
	}
	if !v.AtLeast(4, 0, 0) {
		if err := held[0].Ack(); err != nil {
			t.Fatalf("RabbitMQ %s: no per-queue consumer timeout, yet the ack failed: %v", v, err)
		}
		return
	}
	// The broker ends the consumer: what it held is ready again.
	brokertest.WaitDepth(t, q, 3, 90*time.Second)
	err = held[0].Ack()
	switch {
	case v.AtLeast(4, 3, 0) && !errors.Is(err, broker.ErrConsumerCancelled):
		t.Fatalf("RabbitMQ %s: an ack after the broker cancelled the consumer: %v, want ErrConsumerCancelled", v, err)
	case err == nil:
		t.Fatalf("RabbitMQ %s: an ack after the broker closed the channel succeeded", v)
	}
	p.Close(context.Background())
	brokertest.WaitDepth(t, q, 3, 30*time.Second) // none removed
}
