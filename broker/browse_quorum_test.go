//go:build integration

package broker_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/broker/brokertest"
	"github.com/parkinglot/parkinglot/replay"
)

// A quorum queue counts every give-back in x-delivery-count up to 4.2 and
// drops (or dead-letters) a message past its delivery limit: measured on
// 3.10.8 with a limit of 3, the 4th hold-and-give-back browse found the
// message gone. From 4.3 the pass's basic.nack give-back is not counted. A
// parking lot of this kind is browsed 100 times through broker.OpenPass /
// Close; every message must still be there, unchanged, and each pass's
// report must say what it did to keep it so (a note naming the limit, and
// Refreshed counting the messages re-published instead of given back: some
// where the nack counts, none where it does not).
func TestBrowseQuorumParkingLot100TimesLosesNothing(t *testing.T) {
	const messages, passes = 50, 100
	for _, limit := range []int{20, 3} {
		t.Run(fmt.Sprintf("delivery limit %d", limit), func(t *testing.T) {
			start := time.Now()
			conn := brokertest.Dial(t, "")
			ch := brokertest.Channel(t)
			mgmt := brokertest.Management(t)
			q := brokertest.Name(t, "parking")
			brokertest.DeclareQueue(t, ch, q, amqp.Table{"x-queue-type": "quorum", "x-delivery-limit": int32(limit)})
			want := publishParked(t, ch, q, messages)

			refreshed, givenBack, maxCount := 0, 0, int64(0)
			for pass := 1; pass <= passes; pass++ {
				seen, counts, rep := browseCounting(t, conn, mgmt, q)
				if len(seen) != messages || rep.Seen != messages || rep.Taken != 0 || rep.GivenBack+rep.Refreshed != messages {
					t.Fatalf("pass %d saw %d distinct of %d; report %+v", pass, len(seen), messages, rep)
				}
				// Exactly the messages one give-back short of the limit are
				// refreshed (a spare give-back stays for a connection lost
				// while they are held).
				atRisk := 0
				for _, c := range counts {
					maxCount = max(maxCount, c)
					if c+2 > int64(limit) {
						atRisk++
					}
				}
				if rep.Refreshed != atRisk {
					t.Fatalf("pass %d refreshed %d messages, but %d were within one give-back of the limit %d", pass, rep.Refreshed, atRisk, limit)
				}
				if !hasLimitNote(rep.Notes, limit) {
					t.Fatalf("pass %d: no note says what the pass does about the delivery limit: %v", pass, rep.Notes)
				}
				refreshed += rep.Refreshed
				givenBack += rep.GivenBack
				brokertest.WaitDepth(t, q, messages, 10*time.Second)
			}
			if maxCount > int64(limit)-1 {
				t.Errorf("a message reached x-delivery-count %d: within one give-back of the limit %d", maxCount, limit)
			}
			switch v := brokertest.Version(t); {
			case v.NackCountsTowardDeliveryLimit() && refreshed == 0:
				t.Errorf("RabbitMQ %s: %d passes over a queue with delivery limit %d refreshed nothing", v, passes, limit)
			case !v.NackCountsTowardDeliveryLimit() && (refreshed != 0 || maxCount != 0):
				t.Errorf("RabbitMQ %s does not count a nack give-back, yet %d passes refreshed %d messages and a count reached %d", v, passes, refreshed, maxCount)
			}
			lost, changed, dups := checkParked(t, ch, q, want)
			brokertest.Figures(t, "quorum browse: delivery_limit=%d messages=%d passes=%d given_back=%d refreshed=%d max_delivery_count=%d lost=%d changed=%d duplicates=%d duration=%s",
				limit, messages, passes, givenBack, refreshed, maxCount, lost, changed, dups, time.Since(start).Round(100*time.Millisecond))
		})
	}
}

// TestBrowseQuorumParkingLotListedBySessions100Times does the same as
// `parkinglot list` does it, each list a replay session and connection of
// its own: 100 lists of a quorum parking lot with delivery limit 3 lose
// nothing, and every list notes what it does about the limit (the CLI
// prints the notes on stderr; ui/cli tests that).
func TestBrowseQuorumParkingLotListedBySessions100Times(t *testing.T) {
	const messages, runs, limit = 50, 100, 3
	start := time.Now()
	ch := brokertest.Channel(t)
	q := brokertest.Name(t, "parking")
	brokertest.DeclareQueue(t, ch, q, amqp.Table{"x-queue-type": "quorum", "x-delivery-limit": int32(limit)})
	want := publishParked(t, ch, q, messages)
	conn := replay.Connection{URL: brokertest.URL(), ManagementURL: brokertest.ManagementURL()}
	for run := 1; run <= runs; run++ {
		ids := map[string]bool{}
		var notes []replay.Note
		func() {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			s, err := replay.Open(ctx, conn, replay.Config{}, "parkinglot-test "+t.Name(), nil)
			if err != nil {
				t.Fatalf("list run %d: open session: %v", run, err)
			}
			defer s.Close()
			b, err := s.Browse(ctx, replay.BrowseOptions{Queue: q, StreamOnly: true, OnBatch: func(batch []replay.Summary) {
				for _, m := range batch {
					ids[m.ID] = true
				}
			}})
			if err != nil {
				t.Fatalf("list run %d: %v", run, err)
			}
			notes = b.Notes
		}()
		if len(ids) != messages {
			t.Fatalf("list run %d listed %d distinct messages, want %d\n%v", run, len(ids), messages, notes)
		}
		var pass []broker.Note
		for _, n := range notes {
			if n.Kind == replay.NotePass {
				pass = append(pass, n.Pass)
			}
		}
		if !hasLimitNote(pass, limit) {
			t.Fatalf("list run %d does not note what it does about the delivery limit; notes:\n%v", run, notes)
		}
		brokertest.WaitDepth(t, q, messages, 10*time.Second)
	}
	lost, changed, dups := checkParked(t, ch, q, want)
	brokertest.Figures(t, "quorum list (sessions): delivery_limit=%d messages=%d runs=%d lost=%d changed=%d duplicates=%d duration=%s",
		limit, messages, runs, lost, changed, dups, time.Since(start).Round(100*time.Millisecond))
}

// publishParked fills q with n parked-looking messages and returns them by id.
func publishParked(t *testing.T, ch *amqp.Channel, q string, n int) map[string]amqp.Publishing {
	t.Helper()
	want := map[string]amqp.Publishing{}
	msgs := make([]amqp.Publishing, n)
	for i := range msgs {
		id := fmt.Sprintf("parked-%03d", i)
		msgs[i] = amqp.Publishing{
			MessageId: id, DeliveryMode: amqp.Persistent, ContentType: "application/json",
			Headers: amqp.Table{"x-failure-kind": "permanent", "x-last-error": "bad payload " + id, "tenant": "acme"},
			Body:    []byte(fmt.Sprintf(`{"payment":%d}`, i)),
		}
		want[id] = msgs[i]
	}
	brokertest.PublishMany(t, ch, "", q, msgs)
	return want
}

// browseCounting runs one pass, taking nothing, and returns the ids seen
// and each one's x-delivery-count when delivered.
func browseCounting(t *testing.T, conn *broker.Conn, mgmt *broker.Management, queue string) (map[string]bool, map[string]int64, broker.PassReport) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p, err := broker.OpenPass(ctx, conn, broker.PassOptions{Queue: queue, Management: mgmt})
	if err != nil {
		t.Fatalf("open pass: %v", err)
	}
	seen := map[string]bool{}
	counts := map[string]int64{}
	for {
		h, err := p.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("next: %v", err)
		}
		seen[h.ID()] = true
		counts[h.ID()] = h.DeliveryCount
	}
	rep, err := p.Close(ctx)
	if err != nil {
		t.Fatalf("close pass: %v", err)
	}
	return seen, counts, rep
}

// checkParked drains q and compares it with what was published: lost ids,
// messages whose body or headers changed, and extra copies.
func checkParked(t *testing.T, ch *amqp.Channel, q string, want map[string]amqp.Publishing) (lost, changed, dups int) {
	t.Helper()
	got := map[string]int{}
	for _, d := range brokertest.Drain(t, ch, q) {
		got[d.MessageId]++
		w, ok := want[d.MessageId]
		if !ok {
			t.Errorf("unknown message %q in the queue", d.MessageId)
			continue
		}
		if !bytes.Equal(d.Body, w.Body) || d.ContentType != w.ContentType || d.DeliveryMode != amqp.Persistent {
			changed++
			t.Errorf("%s changed: body %q content type %q delivery mode %d", d.MessageId, d.Body, d.ContentType, d.DeliveryMode)
		}
		for k, v := range w.Headers {
			if d.Headers[k] != v {
				changed++
				t.Errorf("%s: header %s = %#v, want %#v", d.MessageId, k, d.Headers[k], v)
			}
		}
	}
	var missing []string
	for id := range want {
		switch n := got[id]; {
		case n == 0:
			lost++
			missing = append(missing, id)
		case n > 1:
			dups += n - 1
		}
	}
	sort.Strings(missing)
	if lost > 0 {
		t.Errorf("%d messages lost: %v", lost, missing)
	}
	if dups > 0 {
		t.Errorf("%d duplicate copies in the queue", dups)
	}
	return lost, changed, dups
}

// hasLimitNote: a note tells of the quorum queue's delivery limit.
func hasLimitNote(notes []broker.Note, limit int) bool {
	for _, n := range notes {
		if n.Kind == broker.NoteQuorumLimit && n.Limit.Limit == int64(limit) {
			return true
		}
	}
	return false
}
