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
	"github.com/parkinglot/parkinglot/broker/brokertest/clustertest"
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

// brokerPause is longer than a pass's 15-s stall rule, and shorter than the
// test connection's heartbeat timeout.
const brokerPause = 20 * time.Second

// TestBrowsePauseMidPass: the broker goes silent for 20 s after its 100th
// delivery to a pass (a proxy holds its frames, heartbeats included, as
// RabbitMQ 3.10.8 paused a million-message classic queue for more than
// 15 s). On a classic queue the pass waits it out and sees
// every message in order; nothing is taken and every message is still
// there. (A quorum pass under the same fault also saw all 3,000 here:
// its 15-s rule is not reached this way; not yet understood.)
func TestBrowsePauseMidPass(t *testing.T) {
	for _, tc := range []struct {
		queueType string
		args      amqp.Table
		stalls    bool
	}{
		{"classic", nil, false},
	} {
		t.Run(tc.queueType, func(t *testing.T) {
			t.Parallel() // each waits out the pause
			const n = 3000
			ch := brokertest.Channel(t)
			q := brokertest.Name(t, "q")
			brokertest.DeclareQueue(t, ch, q, tc.args)
			msgs := make([]amqp.Publishing, n)
			for i := range msgs {
				msgs[i] = amqp.Publishing{MessageId: fmt.Sprintf("m-%05d", i), Body: []byte("x"), DeliveryMode: amqp.Persistent}
			}
			brokertest.PublishMany(t, ch, "", q, msgs)

			proxy := clustertest.NewFaultProxy(t)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			// Heartbeats every 30 s: the client tolerates the silence.
			conn, err := broker.Dial(ctx, broker.Options{URL: proxy.URL, Name: "parkinglot-test " + t.Name(), Heartbeat: time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			held := proxy.HoldAfter(100, clustertest.IsMethod(60, 60), brokerPause) // the 100th basic.deliver
			p, err := broker.OpenPass(ctx, conn, broker.PassOptions{Queue: q, Management: brokertest.Management(t)})
			if err != nil {
				t.Fatal(err)
			}
			if p.Facts().Type != tc.queueType {
				t.Fatalf("queue type %q, want %q (from the management API)", p.Facts().Type, tc.queueType)
			}
			seen, outOfOrder := 0, 0
			var passErr error
			for {
				h, err := p.Next(ctx)
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					passErr = err
					break
				}
				if h.ID() != fmt.Sprintf("m-%05d", seen) {
					outOfOrder++
				}
				seen++
			}
			rep, cerr := p.Close(ctx)
			var pause time.Duration
			select {
			case pause = <-held:
			default:
			}
			brokertest.Figures(t, "%s pass, broker silent %v after its 100th delivery of %d: seen=%d out_of_order=%d err=%v taken=%d given_back=%d",
				tc.queueType, pause.Round(time.Millisecond), n, seen, outOfOrder, passErr, rep.Taken, rep.GivenBack)
			if pause < 15*time.Second {
				t.Fatalf("the broker was silent %v: shorter than the 15-s rule, the test tested nothing", pause)
			}
			if cerr != nil {
				t.Fatalf("close: %v", cerr)
			}
			switch {
			case tc.stalls && !errors.Is(passErr, broker.ErrStalled):
				t.Errorf("the %s pass ended with %v after %d, want ErrStalled", tc.queueType, passErr, seen)
			case !tc.stalls && (passErr != nil || seen != n || outOfOrder != 0):
				t.Errorf("the %s pass saw %d of %d (%d out of order) and ended with %v: it should wait the pause out", tc.queueType, seen, n, outOfOrder, passErr)
			}
			if rep.Taken != 0 {
				t.Errorf("the pass took %d", rep.Taken)
			}
			brokertest.WaitDepth(t, q, n, time.Minute)
		})
	}
}
