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
		var want func(i int) string
		if tc.ackEach == 0 {
			want = func(i int) string { return fmt.Sprintf("m-%05d", i) }
		}
		seen, acked, _ := readAll(ctx, t, p, tc.name, want, func(i int) bool { return tc.ackEach > 0 && (i+1)%tc.ackEach != 0 })
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

// TestBrowsePacedQuorumPassOverThePrefetchCap: a pass over a quorum queue
// of more than 65,535 messages (amqp091-go's prefetch cap; without a
// prefetch a quorum queue delivers 2,000 and waits for settlements) sees
// every message in the queue's order while holding them all, and gives
// them all back in that order; one that ends early keeps the order too; one
// that acks some as it reads, past the first segment, removes exactly
// those and misses none.
func TestBrowsePacedQuorumPassOverThePrefetchCap(t *testing.T) {
	passesOver70000(t, "quorum")
}

// TestBrowsePacedClassicLotOf70000KeepsItsOrder: the same passes over a
// classic queue, read in segments of 2,048 and given back by closing the
// channel: each pass sees the queue in the order it was published (so the
// one before gave it all back in place).
func TestBrowsePacedClassicLotOf70000KeepsItsOrder(t *testing.T) {
	passesOver70000(t, "classic")
}

func passesOver70000(t *testing.T, queueType string) {
	const n = 70000
	start := time.Now()
	conn := brokertest.Dial(t, "")
	ch := brokertest.Channel(t)
	mgmt := brokertest.Management(t)
	q := brokertest.Name(t, "q")
	brokertest.DeclareQueue(t, ch, q, amqp.Table{"x-queue-type": queueType})
	msgs := make([]amqp.Publishing, n)
	order := make([]string, n) // the queue's order, as the passes must see it
	for i := range msgs {
		order[i] = fmt.Sprintf("m-%05d", i)
		msgs[i] = amqp.Publishing{MessageId: order[i], Body: []byte("x")}
	}
	brokertest.PublishMany(t, ch, "", q, msgs)
	published := time.Since(start)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	// pass reads the queue, acking the messages ack says, and returns its
	// report and what is left in the queue.
	pass := func(name string, limit int, ack func(i int) bool) (broker.PassReport, []string) {
		t.Helper()
		p, err := broker.OpenPass(ctx, conn, broker.PassOptions{Queue: q, Management: mgmt, Limit: limit})
		if err != nil {
			t.Fatal(err)
		}
		if p.Facts().Type != queueType {
			t.Fatalf("queue type %q: the management API should say %s", p.Facts().Type, queueType)
		}
		seen, acked, left := readAll(ctx, t, p, name, func(i int) string { return order[i] }, ack)
		rep, err := p.Close(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Seen != seen || rep.Taken != acked {
			t.Fatalf("%s: saw %d and acked %d, but the report says %+v", name, seen, acked, rep)
		}
		brokertest.WaitDepth(t, q, len(order)-acked, time.Minute)
		return rep, append(left, order[seen:]...)
	}
	none := func(int) bool { return false }
	var took []time.Duration
	timed := func(f func()) {
		t0 := time.Now()
		f()
		took = append(took, time.Since(t0).Round(100*time.Millisecond))
	}

	timed(func() {
		rep, _ := pass("hold all", 0, none)
		if rep.Seen != n || rep.GivenBack+rep.Refreshed != n {
			t.Fatalf("hold all: report %+v; want all %d seen and given back", rep, n)
		}
	})
	timed(func() {
		rep, _ := pass("limit 5", 5, none)
		if queueType == "classic" { // it ends early: what it did not read stays in place
			if rep.Seen != 5 {
				t.Fatalf("limit 5: report %+v; want 5 seen", rep)
			}
			return
		}
		if rep.Seen != 5 || rep.HeldToKeepOrder != n-5 || rep.GivenBack+rep.Refreshed != n {
			t.Fatalf("limit 5: report %+v; want 5 seen, the other %d held to keep the order, all given back", rep, n-5)
		}
	})
	// Acking every 20th while holding the rest fills the first segment's
	// 65,535 with acks coming in: it ends when the acks' deliveries are in.
	timed(func() {
		rep, left := pass("ack every 20th", 0, func(i int) bool { return i%20 == 19 })
		if rep.Seen != n || rep.Taken != n/20 || rep.GivenBack+rep.Refreshed != n-n/20 {
			t.Fatalf("ack every 20th: report %+v; want %d seen, %d taken, the rest given back", rep, n, n/20)
		}
		order = left
	})
	timed(func() {
		rep, _ := pass("hold the rest", 0, none)
		if rep.Seen != len(order) {
			t.Fatalf("hold the rest: report %+v; want %d seen", rep, len(order))
		}
	})
	brokertest.Figures(t, "%s passes of 70,000: messages=%d publish=%s hold_all=%s limit_5=%s ack_1_in_20=%s hold_rest=%s",
		queueType, n, published.Round(100*time.Millisecond), took[0], took[1], took[2], took[3])
}

// readAll reads a pass to its end, acking the messages ack says, and checks
// that the i-th is want(i) when want is set (a pass sees the queue in
// order). It returns how many it saw and acked, and the ids it did not ack.
func readAll(ctx context.Context, t *testing.T, p *broker.Pass, name string, want func(i int) string, ack func(i int) bool) (seen, acked int, kept []string) {
	t.Helper()
	for {
		h, err := p.Next(ctx)
		if errors.Is(err, io.EOF) {
			return seen, acked, kept
		}
		if err != nil {
			t.Fatalf("%s: after %d: %v", name, seen, err)
		}
		if want != nil && h.ID() != want(seen) {
			t.Fatalf("%s: message %d is %s, not %s: a pass sees the queue in order", name, seen, h.ID(), want(seen))
		}
		if ack(seen) {
			if errs := broker.AckAll([]*broker.Held{h}); errs[0] != nil {
				t.Fatal(errs[0])
			}
			acked++
		} else {
			kept = append(kept, h.ID())
		}
		seen++
	}
}
