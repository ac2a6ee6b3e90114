//go:build integration

package replay_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker/brokertest"
	"github.com/parkinglot/parkinglot/broker/store"
	"github.com/parkinglot/parkinglot/replay"
	"github.com/parkinglot/parkinglot/retrycore"
)

// The TUI hands the engine its selection as a compact IDSet (Selector.Chosen).
// 4,600 ids of 250 bytes are past the 1 MiB the set keeps in memory, so
// the ids are read back from its file: exactly the chosen messages move,
// the others stay parked, and a chosen id that is not there is reported.
func TestReplayOfAChosenSetMovesExactlyThoseMessages(t *testing.T) {
	const n, chosen = 5000, 4600
	ch := brokertest.Channel(t)
	parking, target := brokertest.Name(t, "dlq"), brokertest.Name(t, "origin")
	brokertest.DeclareQueue(t, ch, parking, nil)
	brokertest.DeclareQueue(t, ch, target, nil)
	longID := func(i int) string { return fmt.Sprintf("%s-%05d", strings.Repeat("k", 243), i) }
	publishN(t, ch, "", parking, n, func(i int) amqp.Publishing {
		return amqp.Publishing{MessageId: longID(i), DeliveryMode: amqp.Persistent, Body: []byte("x"),
			Headers: amqp.Table{retrycore.HeaderOriginalExchange: "", retrycore.HeaderOriginalRoutingKey: target}}
	})
	brokertest.WaitDepth(t, parking, n, 15*time.Second)

	set := store.NewIDSet()
	defer set.Close()
	for i := range chosen {
		if err := set.Add(longID(i * n / chosen)); err != nil { // spread over the queue
			t.Fatal(err)
		}
	}
	if err := set.Add("not-parked"); err != nil {
		t.Fatal(err)
	}
	if err := set.Seal(); err != nil {
		t.Fatal(err)
	}
	s, _ := openSession(t, replay.Config{})
	res, err := s.Replay(testCtx(t, 2*time.Minute), replay.Options{Queue: parking, Select: replay.Selector{Chosen: set}})
	if err != nil || !errors.Is(res.Err(), replay.ErrNotAllDone) {
		t.Fatalf("replay: %v, result %v: want the absent id not done", err, res.Err())
	}
	if res.Done != chosen || res.Failed != 1 || len(res.Failures) != 1 || res.Failures[0].ID != "not-parked" || !strings.Contains(res.Failures[0].Err, "no message") {
		t.Fatalf("done %d, failed %d (%+v); want %d done and the absent id not found", res.Done, res.Failed, res.Failures, chosen)
	}
	brokertest.WaitDepth(t, target, chosen, 15*time.Second)
	brokertest.WaitDepth(t, parking, n-chosen, 15*time.Second)
	want := map[string]bool{}
	for i := range chosen {
		want[longID(i*n/chosen)] = true
	}
	for _, d := range brokertest.Drain(t, ch, parking) {
		if want[d.MessageId] {
			t.Fatalf("chosen message %s is still parked", d.MessageId[240:])
		}
	}
}

// Chosen ids the parking lot no longer holds (someone else replayed them
// since the selection was made) are counted, every one; a plan keeps only
// MaxListedFailures of them in memory, as it does refusals, while Plan
// (sorted) still lists them all. Nothing leaves the queue. (ui/cli tests
// how `replay --dry-run` prints them.)
func TestPlanCountsEveryChosenIDNoLongerParked(t *testing.T) {
	const gone = replay.MaxListedFailures + 150
	ch := brokertest.Channel(t)
	parking, target := brokertest.Name(t, "dlq"), brokertest.Name(t, "origin")
	brokertest.DeclareQueue(t, ch, parking, nil)
	brokertest.DeclareQueue(t, ch, target, nil)
	publishN(t, ch, "", parking, 2, func(i int) amqp.Publishing {
		return amqp.Publishing{MessageId: idOf(i), Body: []byte("x"),
			Headers: amqp.Table{retrycore.HeaderOriginalExchange: "", retrycore.HeaderOriginalRoutingKey: target}}
	})
	brokertest.WaitDepth(t, parking, 2, 15*time.Second)
	goneID := func(i int) string { return fmt.Sprintf("gone-%04d", gone-1-i) } // chosen in reverse order
	isGone := map[string]bool{}
	for i := range gone {
		isGone[goneID(i)] = true
	}
	allGone := func(ids []string) bool {
		seen := map[string]bool{}
		for _, id := range ids {
			if !isGone[id] || seen[id] {
				return false
			}
			seen[id] = true
		}
		return true
	}
	ids := []string{idOf(0), idOf(1)}
	for i := range gone {
		ids = append(ids, goneID(i))
	}

	s, _ := openSession(t, replay.Config{})
	ctx := testCtx(t, time.Minute)
	o := replay.Options{Queue: parking, Select: replay.Selector{IDs: ids}}
	each, err := s.PlanEach(ctx, o, replay.PlanSink{})
	if err != nil {
		t.Fatal(err)
	}
	if each.Chosen != 2 || each.MissingCount != gone || len(each.Missing) != replay.MaxListedFailures || !allGone(each.Missing) {
		t.Fatalf("PlanEach: chosen %d, missing %d, listed %d; want 2, %d, and %d of them listed",
			each.Chosen, each.MissingCount, len(each.Missing), gone, replay.MaxListedFailures)
	}
	all, err := s.Plan(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if all.MissingCount != gone || len(all.Missing) != gone || all.Missing[0] != "gone-0000" || all.Missing[gone-1] != goneID(0) {
		t.Fatalf("Plan: missing %d, listed %d; want every one of %d, sorted", all.MissingCount, len(all.Missing), gone)
	}

	if d := brokertest.Depth(t, ch, parking); d != 2 {
		t.Fatalf("parking lot holds %d after the plans, want 2", d)
	}
	if d := brokertest.Depth(t, ch, target); d != 0 {
		t.Fatalf("origin holds %d after the plans, want 0", d)
	}
}
