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
	"github.com/parkinglot/parkinglot/broker/brokertest/clustertest"
)

// TestCloseOfAChannelTheBrokerNeverAnswers: when the broker stops answering
// (a proxy passes nothing on either way, as a node in a cluster minority
// never answers a close), a
// consumer's cancel, a channel close and a connection close return
// ErrCloseUnanswered within CloseWait, the connection is dropped, and the message the channel held
// is back in the queue: nothing lost.
func TestCloseOfAChannelTheBrokerNeverAnswers(t *testing.T) {
	for _, call := range []string{"cancel", "close", "connection close"} {
		t.Run(call, func(t *testing.T) {
			t.Parallel() // each waits CloseWait
			ch := brokertest.Channel(t)
			q := brokertest.Name(t, "held")
			brokertest.DeclareQueue(t, ch, q, nil)
			brokertest.Publish(t, ch, "", q, amqp.Publishing{MessageId: "held-1", Body: []byte("x")})

			proxy := clustertest.NewFaultProxy(t)
			ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
			defer cancel()
			conn, err := broker.Dial(ctx, broker.Options{URL: proxy.URL, Name: "parkinglot-test " + t.Name()})
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			held, err := conn.Channel()
			if err != nil {
				t.Fatal(err)
			}
			deliveries, err := held.Consume(q, "held", false, false, false, false, nil)
			if err != nil {
				t.Fatal(err)
			}
			if d := <-deliveries; d.MessageId != "held-1" {
				t.Fatalf("delivered %q", d.MessageId)
			}
			if n := brokertest.Depth(t, ch, q); n != 0 {
				t.Fatalf("%d ready while held, want 0", n)
			}

			proxy.Mute()
			start := time.Now()
			switch call {
			case "cancel":
				err = conn.Bounded("cancel consumer", broker.CloseWait, func() error { return held.Cancel("held", false) })
			case "close":
				err = conn.CloseChannel(held)
			case "connection close":
				err = conn.Close()
			}
			took := time.Since(start)
			if !errors.Is(err, broker.ErrCloseUnanswered) {
				t.Fatalf("%s: %v, want ErrCloseUnanswered", call, err)
			}
			if took > broker.CloseWait+5*time.Second {
				t.Errorf("%s returned after %v, want within CloseWait (%v) and the drop", call, took.Round(time.Millisecond), broker.CloseWait)
			}
			if !conn.IsClosed() {
				t.Errorf("the connection is still open after an unanswered %s", call)
			}
			// Nothing the client sent after the mute reached the broker: it
			// gives the message back because the socket was dropped.
			back, ok := brokertest.GetWithin(t, ch, q, 30*time.Second)
			if !ok || back.MessageId != "held-1" {
				t.Fatalf("the held message did not come back after the drop (got %q)", back.MessageId)
			}
			t.Logf("%s unanswered: returned after %v, message back", call, took.Round(time.Millisecond))
		})
	}
}
