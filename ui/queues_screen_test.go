package ui

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/replay/watch"
)

// TestQueuesScreenPutsTheMostUrgentParkingLotFirst: the parking lot whose
// oldest message waited longest comes first, then the deepest; each shows
// its oldest age and a depth trend, the other queues after them.
func TestQueuesScreenPutsTheMostUrgentParkingLotFirst(t *testing.T) {
	fb := newFakeBackend(t.TempDir())
	fb.lots = []watch.Snapshot{
		{Queue: "a.dlq", Depth: 50, OldestParkedAt: testNow.Add(-2 * time.Minute), Source: watch.AgeHeader},
		{Queue: "b.dlq", Depth: 1, OldestParkedAt: testNow.Add(-3 * time.Hour), Source: watch.AgeHeader},
	}
	c := &common{ctx: context.Background(), backend: fb, styles: NewStyles(asciiRenderer()), keys: DefaultKeyMap(), now: func() time.Time { return testNow }, workers: newWorkers(), width: 120, height: 20, refresh: -1}
	q := newQueuesScreen(c)
	rows := []QueueRow{
		{QueueInfo: broker.QueueInfo{Name: "a.dlq", Type: "classic", Messages: 50}, ParkingLot: true},
		{QueueInfo: broker.QueueInfo{Name: "b.dlq", Type: "classic", Messages: 1}, ParkingLot: true},
		{QueueInfo: broker.QueueInfo{Name: "main", Type: "classic"}},
	}
	_, cmd := q.Update(queuesLoadedMsg{rows: rows})
	if cmd == nil {
		t.Fatal("the first listing did not ask for the parking lots' ages")
	}
	q.Update(cmd())
	rows[0].Messages = 60 // a later refresh: the trend grows
	q.Update(queuesLoadedMsg{rows: append([]QueueRow(nil), rows...)})
	view := q.View()
	ib, ia, im := strings.Index(view, "b.dlq"), strings.Index(view, "a.dlq"), strings.Index(view, "main")
	if ib < 0 || ia < ib || im < ia {
		t.Fatalf("order b.dlq (3h old), a.dlq, main wanted:\n%s", view)
	}
	for _, want := range []string{"3h0m", "2m0s", "▁█"} {
		if !strings.Contains(view, want) {
			t.Errorf("no %q on the screen:\n%s", want, view)
		}
	}
}
