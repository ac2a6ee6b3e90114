//go:build integration

package broker_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/broker/brokertest"
)

// TestBrowsePacedClassicPassHoldsEverything: a pass over a classic queue
// larger than its push window (a channel-wide prefetch it raises as the
// caller takes messages) still sees every message while holding all of
// them in the queue's order, and while acking most and holding the rest (a replay with
// failures), and gives back exactly what it did not ack.
func TestBrowsePacedClassicPassHoldsEverything(t *testing.T) {
	const n = 5000 // more than two push windows
	conn := brokertest.Dial(t, "")
	ch := brokertest.Channel(t)
	mgmt := brokertest.Management(t)
	q := brokertest.Name(t, "q")
	brokertest.DeclareQueue(t, ch, q, nil)
	msgs := make([]amqp.Publishing, n)
	for i := range msgs {
		msgs[i] = amqp.Publishing{MessageId: fmt.Sprintf("m-%05d", i), Body: []byte("x")}
	}
	brokertest.PublishMany(t, ch, "", q, msgs)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	for _, tc := range []struct {
		name    string
		ackEach int // ack every message but each ackEach-th; 0: ack none
	}{{"hold all", 0}, {"ack most, hold every 7th", 7}} {
		ready := brokertest.Depth(t, ch, q)
		p, err := broker.OpenPass(ctx, conn, broker.PassOptions{Queue: q, Management: mgmt})
		if err != nil {
			t.Fatal(err)
		}
		if p.Facts().Type != "classic" {
			t.Fatalf("queue type %q: the management API should say classic", p.Facts().Type)
		}
		seen, acked := 0, 0
		for {
			h, err := p.Next(ctx)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("%s: after %d: %v", tc.name, seen, err)
			}
			if tc.ackEach == 0 && h.ID() != fmt.Sprintf("m-%05d", seen) {
				t.Fatalf("%s: message %d is %s: a pass sees the queue in order", tc.name, seen, h.ID())
			}
			seen++
			if tc.ackEach > 0 && seen%tc.ackEach != 0 {
				if errs := broker.AckAll([]*broker.Held{h}); errs[0] != nil {
					t.Fatal(errs[0])
				}
				acked++
			}
		}
		rep, err := p.Close(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if seen != ready || rep.Seen != ready || rep.Taken != acked || rep.GivenBack != ready-acked {
			t.Fatalf("%s: seen %d, report %+v; want %d seen, %d taken", tc.name, seen, rep, ready, acked)
		}
		brokertest.WaitDepth(t, q, ready-acked, 10*time.Second)
	}
}
