//go:build integration

package broker_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/broker/brokertest"
)

func publishN(t *testing.T, ch *amqp.Channel, queue string, n int) {
	t.Helper()
	msgs := make([]amqp.Publishing, n)
	for i := range msgs {
		msgs[i] = amqp.Publishing{MessageId: fmt.Sprintf("m-%04d", i), Body: []byte(fmt.Sprintf("body %d", i)), DeliveryMode: amqp.Persistent}
	}
	brokertest.PublishMany(t, ch, "", queue, msgs)
}

// readToEnd takes every delivery Next hands over until io.EOF (a test
// fails on any other error) and returns how many.
func readToEnd(t *testing.T, ctx context.Context, p *broker.Pass) int {
	t.Helper()
	n := 0
	for {
		_, err := p.Next(ctx)
		if errors.Is(err, io.EOF) {
			return n
		}
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
}

// browseAll runs one pass over the queue, taking nothing, and returns the ids
// in the order seen.
func browseAll(t *testing.T, conn *broker.Conn, mgmt *broker.Management, queue string) ([]string, broker.PassReport) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p, err := broker.OpenPass(ctx, conn, broker.PassOptions{Queue: queue, Management: mgmt})
	if err != nil {
		t.Fatalf("open pass: %v", err)
	}
	var ids []string
	for {
		h, err := p.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("next: %v", err)
		}
		ids = append(ids, h.ID())
	}
	rep, err := p.Close(ctx)
	if err != nil {
		t.Fatalf("close pass: %v", err)
	}
	return ids, rep
}

func TestBrowseClassicGivesEverythingBackInOrder(t *testing.T) {
	conn := brokertest.Dial(t, "")
	ch := brokertest.Channel(t)
	q := brokertest.Name(t, "q")
	brokertest.DeclareQueue(t, ch, q, nil)
	publishN(t, ch, q, 50)

	first, rep := browseAll(t, conn, brokertest.Management(t), q)
	if len(first) != 50 || rep.GivenBack != 50 || rep.Taken != 0 {
		t.Fatalf("first pass saw %d, report %+v; want 50 seen and given back", len(first), rep)
	}
	brokertest.WaitDepth(t, q, 50, 10*time.Second)
	second, _ := browseAll(t, conn, brokertest.Management(t), q)
	if fmt.Sprint(first) != fmt.Sprint(second) {
		t.Fatalf("order changed between passes:\n%v\n%v", first, second)
	}
}

func TestBrowseLimitStopsEarlyAndLeavesTheRest(t *testing.T) {
	conn := brokertest.Dial(t, "")
	ch := brokertest.Channel(t)
	q := brokertest.Name(t, "q")
	brokertest.DeclareQueue(t, ch, q, nil)
	publishN(t, ch, q, 30)
	ctx := context.Background()
	p, err := broker.OpenPass(ctx, conn, broker.PassOptions{Queue: q, Limit: 5})
	if err != nil {
		t.Fatal(err)
	}
	n := readToEnd(t, ctx, p)
	if _, err := p.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if n != 5 {
		t.Fatalf("saw %d messages with Limit 5", n)
	}
	brokertest.WaitDepth(t, q, 30, 10*time.Second)
}

func TestBrowseAckRemovesOnlyTakenMessages(t *testing.T) {
	conn := brokertest.Dial(t, "")
	ch := brokertest.Channel(t)
	q := brokertest.Name(t, "q")
	brokertest.DeclareQueue(t, ch, q, nil)
	publishN(t, ch, q, 10)
	ctx := context.Background()
	p, err := broker.OpenPass(ctx, conn, broker.PassOptions{Queue: q})
	if err != nil {
		t.Fatal(err)
	}
	for {
		h, err := p.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.ID() == "m-0003" || h.ID() == "m-0007" {
			if err := h.Ack(); err != nil {
				t.Fatal(err)
			}
		}
	}
	rep, err := p.Close(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Taken != 2 || rep.GivenBack != 8 {
		t.Fatalf("report %+v, want 2 taken and 8 given back", rep)
	}
	brokertest.WaitDepth(t, q, 8, 10*time.Second)
	for _, d := range brokertest.Drain(t, ch, q) {
		if d.MessageId == "m-0003" || d.MessageId == "m-0007" {
			t.Fatalf("taken message %s is still in the queue", d.MessageId)
		}
	}
}

// The fault: a quorum queue whose delivery limit is 3 drops a message given
// back a 4th time (every version that counts a nack give-back). Ten browses
// must lose nothing, refreshing where the give-back counts.
func TestBrowseQuorumDeliveryLimitLosesNothing(t *testing.T) {
	for _, limit := range []int32{3, 20} {
		t.Run(fmt.Sprintf("limit%d", limit), func(t *testing.T) {
			conn := brokertest.Dial(t, "")
			ch := brokertest.Channel(t)
			mgmt := brokertest.Management(t)
			q := brokertest.Name(t, "q")
			brokertest.DeclareQueue(t, ch, q, amqp.Table{"x-queue-type": "quorum", "x-delivery-limit": limit})
			publishN(t, ch, q, 20)
			passes := 10
			if limit == 20 {
				passes = 30
			}
			refreshed := 0
			for i := 0; i < passes; i++ {
				ids, rep := browseAll(t, conn, mgmt, q)
				if len(ids) != 20 {
					t.Fatalf("pass %d saw %d messages, want 20 (report %+v)", i+1, len(ids), rep)
				}
				refreshed += rep.Refreshed
				brokertest.WaitDepth(t, q, 20, 10*time.Second)
			}
			switch v := brokertest.Version(t); {
			case v.NackCountsTowardDeliveryLimit() && refreshed == 0:
				t.Fatalf("RabbitMQ %s: %d passes over a queue with delivery limit %d refreshed nothing", v, passes, limit)
			case !v.NackCountsTowardDeliveryLimit() && refreshed != 0:
				t.Fatalf("RabbitMQ %s does not count a nack give-back, yet %d passes refreshed %d", v, passes, refreshed)
			}
			seen := map[string]bool{}
			for _, d := range brokertest.Drain(t, ch, q) {
				seen[d.MessageId] = true
			}
			if len(seen) != 20 {
				t.Fatalf("after %d browses %d distinct messages are left, want 20", passes, len(seen))
			}
		})
	}
}

func TestBrowseWithoutManagementStillProtectsQuorum(t *testing.T) {
	conn := brokertest.Dial(t, "")
	ch := brokertest.Channel(t)
	q := brokertest.Name(t, "q")
	brokertest.DeclareQueue(t, ch, q, amqp.Table{"x-queue-type": "quorum", "x-delivery-limit": int32(2)})
	publishN(t, ch, q, 5)
	for i := 0; i < 8; i++ {
		ids, rep := browseAll(t, conn, nil, q)
		if len(ids) != 5 {
			t.Fatalf("pass %d saw %d, want 5 (%+v)", i+1, len(ids), rep)
		}
		brokertest.WaitDepth(t, q, 5, 10*time.Second)
	}
}

func TestBrowseMissingQueueIsAClearError(t *testing.T) {
	conn := brokertest.Dial(t, "")
	_, err := broker.OpenPass(context.Background(), conn, broker.PassOptions{Queue: "no-such-queue-" + brokertest.Name(t, "")})
	if !errors.Is(err, broker.ErrNotFound) {
		t.Fatalf("err = %v, want ErrNotFound", err)
	}
	_, err = broker.OpenPass(context.Background(), conn, broker.PassOptions{Queue: "no-such-queue-" + brokertest.Name(t, ""), Management: brokertest.Management(t)})
	if !errors.Is(err, broker.ErrNotFound) {
		t.Fatalf("with management: err = %v, want ErrNotFound", err)
	}
}

func TestSpoolStoresAndRemovesItsFile(t *testing.T) {
	s, err := broker.NewSpool(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 100; i++ {
		if _, err := s.Append(broker.Message{Body: []byte(fmt.Sprintf("b%d", i)), Headers: amqp.Table{"n": int32(i)}}); err != nil {
			t.Fatal(err)
		}
	}
	m, err := s.Get(42)
	if err != nil || string(m.Body) != "b42" || m.Headers["n"] != int32(42) {
		t.Fatalf("Get(42) = %+v, %v", m, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

// The fault: a quorum queue holds back a channel's ack commands past its
// soft limit and drops them when the channel closes. Acking every other
// message (no multiple-ack prefix possible) and closing must still remove
// exactly the acked ones.
func TestBrowseQuorumSelectiveAcksAreAllAppliedBeforeClose(t *testing.T) {
	conn := brokertest.Dial(t, "")
	ch := brokertest.Channel(t)
	mgmt := brokertest.Management(t)
	q := brokertest.Name(t, "q")
	brokertest.DeclareQueue(t, ch, q, amqp.Table{"x-queue-type": "quorum"})
	publishN(t, ch, q, 1000)
	ctx := context.Background()
	p, err := broker.OpenPass(ctx, conn, broker.PassOptions{Queue: q, Management: mgmt})
	if err != nil {
		t.Fatal(err)
	}
	var take []*broker.Held
	taken := map[string]bool{}
	for i := 0; ; i++ {
		h, err := p.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if i%2 == 1 {
			take = append(take, h)
			taken[h.ID()] = true
		}
	}
	for _, err := range broker.AckAll(take) {
		if err != nil {
			t.Fatal(err)
		}
	}
	rep, err := p.Close(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Taken != 500 || rep.GivenBack != 500 {
		t.Fatalf("report %+v, want 500 taken and 500 given back", rep)
	}
	left := brokertest.Drain(t, ch, q)
	for _, d := range left {
		if taken[d.MessageId] {
			t.Fatalf("acked message %s came back after Close (notes: %v)", d.MessageId, rep.Notes)
		}
	}
	if len(left) != 500 {
		t.Fatalf("%d messages left, want 500", len(left))
	}
}

func TestAckAllCoalescesThePrefix(t *testing.T) {
	conn := brokertest.Dial(t, "")
	ch := brokertest.Channel(t)
	q := brokertest.Name(t, "q")
	brokertest.DeclareQueue(t, ch, q, nil)
	publishN(t, ch, q, 10)
	ctx := context.Background()
	p, err := broker.OpenPass(ctx, conn, broker.PassOptions{Queue: q})
	if err != nil {
		t.Fatal(err)
	}
	var all []*broker.Held
	for {
		h, err := p.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, h)
	}
	// Out of order and overlapping: 4..7 first (not a prefix), then 0..4.
	for _, batch := range [][]*broker.Held{all[4:8], all[0:5], all[9:10]} {
		for _, err := range broker.AckAll(batch) {
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	rep, err := p.Close(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Taken != 9 || rep.GivenBack != 1 {
		t.Fatalf("report %+v, want 9 taken, 1 given back", rep)
	}
	left := brokertest.Drain(t, ch, q)
	if len(left) != 1 || left[0].MessageId != all[8].ID() {
		t.Fatalf("left %d messages, want only %s", len(left), all[8].ID())
	}
}

func TestBrowseWaitsForADeliveryStillBeingRead(t *testing.T) {
	// The pass asks for the ready count long before a 16 MiB body is read:
	// the broker then counts the message unacked, not ready. The pass must
	// still see it rather than end with 0 messages.
	conn := brokertest.Dial(t, "")
	ch := brokertest.Channel(t)
	q := brokertest.Name(t, "q")
	brokertest.DeclareQueue(t, ch, q, nil)
	big := make([]byte, 16<<20)
	brokertest.PublishMany(t, ch, "", q, []amqp.Publishing{{MessageId: "big", DeliveryMode: amqp.Persistent, Body: big}})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for i := 0; i < 3; i++ {
		p, err := broker.OpenPass(ctx, conn, broker.PassOptions{Queue: q})
		if err != nil {
			t.Fatal(err)
		}
		broker.SetPassIdle(p, time.Microsecond)
		h, err := p.Next(ctx)
		if err != nil {
			t.Fatalf("pass %d: next: %v (the message is on its way, not gone)", i, err)
		}
		if h.ID() != "big" || len(h.Body) != len(big) {
			t.Fatalf("pass %d: got %q with %d bytes", i, h.ID(), len(h.Body))
		}
		if _, err := p.Close(ctx); err != nil {
			t.Fatal(err)
		}
		brokertest.WaitDepth(t, q, 1, 10*time.Second)
	}
}

// TestBrowseOfAQueueDeletedMidPassSaysTheBrokerCancelledIt: a parking lot
// deleted while a browse holds its messages ends the pass with
// ErrConsumerCancelled, not "connection lost" (the connection is up: a
// next browse on it works).
func TestBrowseOfAQueueDeletedMidPassSaysTheBrokerCancelledIt(t *testing.T) {
	conn := brokertest.Dial(t, "")
	ch := brokertest.Channel(t)
	q := brokertest.Name(t, "deleted")
	brokertest.DeclareQueue(t, ch, q, nil)
	publishN(t, ch, q, 5000) // more than a pass is pushed ahead of what it holds
	ctx := context.Background()
	p, err := broker.OpenPass(ctx, conn, broker.PassOptions{Queue: q})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Next(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := ch.QueueDelete(q, false, false, false); err != nil {
		t.Fatal(err)
	}
	for err == nil {
		_, err = p.Next(ctx)
	}
	if !errors.Is(err, broker.ErrConsumerCancelled) || strings.Contains(err.Error(), "connection") {
		t.Errorf("the pass ended with %v, want ErrConsumerCancelled", err)
	}
	_, _ = p.Close(ctx)

	other := brokertest.Name(t, "after")
	brokertest.DeclareQueue(t, ch, other, nil)
	publishN(t, ch, other, 3)
	if seen, _ := browseAll(t, conn, brokertest.Management(t), other); len(seen) != 3 {
		t.Errorf("a browse on the same connection afterwards saw %d, want 3", len(seen))
	}
}
