//go:build integration

package broker_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/broker/brokertest"
)

// holdSome starts another consumer on queue (a service, a replay, a
// watch's scan) and waits until it holds n messages, unacked.
func holdSome(t *testing.T, queue string, n int) *amqp.Channel {
	t.Helper()
	ch := brokertest.Channel(t)
	if err := ch.Qos(n, 0, false); err != nil {
		t.Fatal(err)
	}
	ds, err := ch.Consume(queue, "", false, false, false, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	for range n {
		select {
		case <-ds:
		case <-time.After(10 * time.Second):
			t.Fatalf("the other consumer of %s got fewer than %d messages", queue, n)
		}
	}
	return ch
}

func isOthers(n broker.Note) bool { return n.Kind == broker.NoteOtherConsumers }

// othersNote is the pass's note of other consumers, if any.
func othersNote(rep broker.PassReport) (broker.Note, bool) {
	i := slices.IndexFunc(rep.Notes, isOthers)
	if i < 0 {
		return broker.Note{}, false
	}
	return rep.Notes[i], true
}

// TestAPassSaysOtherConsumersHeldWhatItDidNotSee: messages another
// consumer holds are neither ready nor delivered to a pass, so a list or a
// replay by id would not see them; the pass says so, whether the consumer
// was there when it began or came during it, and says nothing when there
// was none.
func TestAPassSaysOtherConsumersHeldWhatItDidNotSee(t *testing.T) {
	conn := brokertest.Dial(t, "")
	ch := brokertest.Channel(t)
	mgmt := brokertest.Management(t)

	alone := brokertest.Name(t, "alone")
	brokertest.DeclareQueue(t, ch, alone, nil)
	publishN(t, ch, alone, 5)
	if _, rep := browseAll(t, conn, mgmt, alone); slices.ContainsFunc(rep.Notes, isOthers) {
		t.Errorf("a queue with no other consumer: notes %+v", rep.Notes)
	}

	before := brokertest.Name(t, "before")
	brokertest.DeclareQueue(t, ch, before, nil)
	publishN(t, ch, before, 5)
	other := holdSome(t, before, 2)
	ids, rep := browseAll(t, conn, mgmt, before)
	if len(ids) != 3 {
		t.Errorf("the pass saw %v, want the 3 the other consumer did not hold", ids)
	}
	if n, ok := othersNote(rep); !ok || n.Count != 1 {
		t.Errorf("notes %+v, want one of 1 other consumer", rep.Notes)
	}
	if err := other.Close(); err != nil {
		t.Fatal(err)
	}
	if ids, _ := browseAll(t, conn, mgmt, before); len(ids) != 5 {
		t.Errorf("after the other consumer left the pass saw %d, want 5", len(ids))
	}

	during := brokertest.Name(t, "during")
	brokertest.DeclareQueue(t, ch, during, nil)
	publishN(t, ch, during, 5000) // more than one segment: the rest stays ready
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p, err := broker.OpenPass(ctx, conn, broker.PassOptions{Queue: during, Management: mgmt})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Next(ctx); err != nil { // consuming: the first segment is pushed
		t.Fatal(err)
	}
	other = holdSome(t, during, 10)
	seen := 1 + readToEnd(t, ctx, p)
	rep, err = p.Close(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if seen != 4990 {
		t.Errorf("the pass saw %d, want the 4990 the other consumer did not hold", seen)
	}
	if n, ok := othersNote(rep); !ok || n.Count != 1 {
		t.Errorf("notes %+v, want one of 1 other consumer", rep.Notes)
	}
	_ = other.Close()
}

// TestAPassAskedToRunAloneDoesNotBeginBesideAnotherConsumer: a pass that
// need not run now (a watch's scan) asks the queue itself for consumers
// just before it consumes, and takes nothing when there are any.
func TestAPassAskedToRunAloneDoesNotBeginBesideAnotherConsumer(t *testing.T) {
	conn := brokertest.Dial(t, "")
	ch := brokertest.Channel(t)
	q := brokertest.Name(t, "scanned")
	brokertest.DeclareQueue(t, ch, q, nil)
	publishN(t, ch, q, 5)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p, err := broker.OpenPass(ctx, conn, broker.PassOptions{Queue: q, Alone: true})
	if err != nil {
		t.Fatalf("alone on a queue without consumers: %v", err)
	}
	if _, err := p.Close(ctx); err != nil {
		t.Fatal(err)
	}
	brokertest.WaitDepth(t, q, 5, 10*time.Second)

	other := holdSome(t, q, 2)
	if p, err := broker.OpenPass(ctx, conn, broker.PassOptions{Queue: q, Alone: true}); !errors.Is(err, broker.ErrOthersConsume) {
		if p != nil {
			_, _ = p.Close(ctx)
		}
		t.Fatalf("alone beside another consumer: %v, want ErrOthersConsume", err)
	}
	if ready, consumers, err := broker.QueueCounts(ch, q); err != nil || ready != 3 || consumers != 1 {
		t.Errorf("after the refused pass: %d ready, %d consumer(s), %v; want the 3 the other did not hold, its consumer alone", ready, consumers, err)
	}
	_ = other.Close()
}
