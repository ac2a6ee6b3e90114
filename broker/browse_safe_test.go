//go:build integration

package broker_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/broker/brokertest"
)

// A parking lot filled by a delivery limit at the broker's defaults: on
// 4.3 every message arrives one lost connection from the lot's own default
// limit (x-delivery-count 21 against 20), so a pass makes each safe before
// it hands anything over, and the lot keeps its order; on 4.0 (the count
// reset when dead-lettered) and 3.10 (no default limit; parked by a reject)
// nothing is at risk and nothing is re-published.
func TestAPassMakesSafeWhatALostConnectionWouldDrop(t *testing.T) {
	const n = 600
	lot := brokertest.Name(t, "lot")
	parked := brokertest.ParkByDeliveryLimit(t, lot, n)
	v := brokertest.Version(t)
	carried := v.AtLeast(4, 3, 0)

	conn := brokertest.Dial(t, "")
	ids, rep := passIDs(t, conn, lot)
	if !slices.Equal(ids, parked.IDs) {
		t.Fatalf("RabbitMQ %s: the pass saw %d messages, want the %d parked in order (first seen %v)", v, len(ids), n, ids[:min(5, len(ids))])
	}
	want := 0
	if carried {
		want = n
	}
	if rep.Refreshed != want || rep.Seen != n {
		t.Fatalf("RabbitMQ %s (parked by %s): refreshed %d, seen %d; want refreshed %d, seen %d", v, parked.Reason, rep.Refreshed, rep.Seen, want, n)
	}
	// Made safe once: the next pass finds nothing at risk, same order.
	ids, rep = passIDs(t, conn, lot)
	if !slices.Equal(ids, parked.IDs) || rep.Refreshed != 0 {
		t.Fatalf("RabbitMQ %s: second pass refreshed %d, order kept %v", v, rep.Refreshed, slices.Equal(ids, parked.IDs))
	}
}

// The connection of a pass is cut by the broker (as a dropped network, a
// killed process or a node going away cut it) right after the pass handed
// over its first message. Every message of a lot filled by the delivery
// limit at the defaults is still there afterwards, on every version: on
// 4.3, where the cut counts and the messages arrived at the limit, they
// were made safe before the first was handed over.
func TestALostConnectionMidPassLosesNothingFromALotFilledByTheDeliveryLimit(t *testing.T) {
	const n = 600
	lot := brokertest.Name(t, "lot")
	brokertest.ParkByDeliveryLimit(t, lot, n)
	name := "parkinglot-test-cut " + t.Name()
	conn := brokertest.Dial(t, name)
	mgmt := brokertest.Management(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p, err := broker.OpenPass(ctx, conn, broker.PassOptions{Queue: lot, Management: mgmt})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 10; i++ {
		if _, err := p.Next(ctx); err != nil {
			t.Fatalf("next %d: %v", i, err)
		}
	}
	brokertest.Eventually(t, 10*time.Second, 100*time.Millisecond,
		func() bool { return brokertest.CloseConnections(t, mgmt, name) > 0 },
		func() string { return "the pass's connection was not listed to close" })
	// The broker closes it a moment after the management API answered: a
	// busy client could read every delivery it had buffered before then.
	brokertest.Eventually(t, 30*time.Second, 10*time.Millisecond, conn.IsClosed,
		func() string { return "the client never saw its connection closed" })
	for {
		if _, err := p.Next(ctx); err != nil {
			if errors.Is(err, io.EOF) {
				t.Fatal("the pass ended as if whole after its connection was closed")
			}
			break
		}
	}
	brokertest.WaitDepth(t, lot, n, 30*time.Second)
}

// passIDs reads a whole pass over queue and gives everything back.
func passIDs(t *testing.T, conn *broker.Conn, queue string) ([]string, broker.PassReport) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p, err := broker.OpenPass(ctx, conn, broker.PassOptions{Queue: queue, Management: brokertest.Management(t)})
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
		if strings.HasPrefix(h.ID(), "poison-") {
			ids = append(ids, h.ID())
		}
	}
	rep, err := p.Close(ctx)
	if err != nil {
		t.Fatalf("close: %v", err)
	}
	return ids, rep
}

// A parking lot with RabbitMQ 4.3's delayed retry hides a message given
// back for the delay (measured: a list right after a list saw 0 of 3). A
// pass over it re-publishes what it held instead of giving it back, so a
// second pass right after the first sees every message, in order, and the
// first says why. Before 4.3 the arguments are accepted and ignored: the
// passes give back as usual.
func TestAPassOverALotWithDelayedRetryHidesNothingFromTheNext(t *testing.T) {
	ch := brokertest.Channel(t)
	lot := brokertest.Name(t, "delayed")
	brokertest.DeclareQueue(t, ch, lot, amqp.Table{
		"x-queue-type": "quorum", "x-delayed-retry-type": "all",
		"x-delayed-retry-min": int32(30000), "x-delayed-retry-max": int32(30000),
	})
	var want []string
	for i := 0; i < 3; i++ {
		id := fmt.Sprintf("poison-%05d", i)
		want = append(want, id)
		brokertest.Publish(t, ch, "", lot, amqp.Publishing{MessageId: id, DeliveryMode: amqp.Persistent, Body: []byte("{}")})
	}
	v := brokertest.Version(t)
	conn := brokertest.Dial(t, "")
	_, rep := passIDs(t, conn, lot)
	delayed := v.AtLeast(4, 3, 0)
	noted := slices.ContainsFunc(rep.Notes, func(n broker.Note) bool { return n.Kind == broker.NoteDelayedRetry })
	if refreshed := rep.Refreshed == 3; refreshed != delayed || noted != delayed {
		t.Fatalf("RabbitMQ %s: refreshed %d, noted the delayed retry %v; want both %v", v, rep.Refreshed, noted, delayed)
	}
	ids, _ := passIDs(t, conn, lot)
	if !slices.Equal(ids, want) {
		t.Fatalf("RabbitMQ %s: the pass right after saw %v, want %v", v, ids, want)
	}
}

// Messages another consumer returned to a 4.3 parking lot with a short
// delayed retry (10 s, broker.ShortDelay) are held back, out of the ready
// count: a pass that begins while the management API counts them waits
// the delay out first, so it sees them all instead of a partial lot, and
// says it waited. Before 4.3 nothing is held back and nothing waited.
func TestAPassWaitsOutAShortDelayedRetry(t *testing.T) {
	ch := brokertest.Channel(t)
	lot := brokertest.Name(t, "delayed")
	delay := broker.ShortDelay
	brokertest.DeclareQueue(t, ch, lot, amqp.Table{
		"x-queue-type": "quorum", "x-delayed-retry-type": "all",
		"x-delayed-retry-min": int32(delay.Milliseconds()), "x-delayed-retry-max": int32(delay.Milliseconds()),
	})
	var want []string
	for i := 0; i < 3; i++ {
		id := fmt.Sprintf("poison-%05d", i)
		want = append(want, id)
		brokertest.Publish(t, ch, "", lot, amqp.Publishing{MessageId: id, DeliveryMode: amqp.Persistent, Body: []byte("{}")})
	}
	// A consumer's returns (reject, requeue), as a failing service's.
	for range want {
		if err := brokertest.MustGet(t, ch, lot).Reject(true); err != nil {
			t.Fatal(err)
		}
	}
	v := brokertest.Version(t)
	delayed := v.AtLeast(4, 3, 0)
	if delayed {
		ctx, cancel := context.WithTimeout(context.Background(), delay)
		defer cancel()
		brokertest.Eventually(t, delay, 100*time.Millisecond, func() bool {
			q, err := brokertest.RawQueue(ctx, t, lot)
			n, _ := q["messages_delayed"].(float64)
			return err == nil && int(n) == len(want)
		}, func() string { return "the management API never counted the delayed messages" })
	}
	ids, rep := passIDs(t, brokertest.Dial(t, ""), lot)
	var waited time.Duration
	for _, n := range rep.Notes {
		if n.Kind == broker.NoteDelayedRetry {
			waited = n.Wait
		}
	}
	if delayed != (waited == delay) {
		t.Errorf("RabbitMQ %s: the pass waited %v for delayed messages; want %v", v, waited, map[bool]time.Duration{true: delay}[delayed])
	}
	slices.Sort(ids)
	if !slices.Equal(ids, want) {
		t.Fatalf("RabbitMQ %s: the pass saw %v, want %v", v, ids, want)
	}
}
