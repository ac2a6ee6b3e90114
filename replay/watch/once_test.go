package watch

import (
	"slices"
	"testing"
	"time"
)

// TestLotsFirstOrdersForAPerson: parking lots before other queues; among
// them the longest-waiting head first, then the deepest, empty ones last;
// other queues keep the order they came in.
func TestLotsFirstOrdersForAPerson(t *testing.T) {
	now := time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC)
	type row struct {
		name string
		lot  bool
		snap Snapshot
	}
	rows := []row{
		{"work.b", false, Snapshot{}},
		{"empty.dlq", true, Snapshot{}},
		{"deep.dlq", true, Snapshot{Depth: 900, OldestParkedAt: now.Add(-time.Minute)}},
		{"work.a", false, Snapshot{}},
		{"old.dlq", true, Snapshot{Depth: 3, OldestParkedAt: now.Add(-time.Hour)}},
		{"shallow.dlq", true, Snapshot{Depth: 5, OldestParkedAt: now.Add(-time.Minute)}},
	}
	slices.SortStableFunc(rows, func(a, b row) int { return LotsFirst(a.lot, b.lot, a.snap, b.snap, now) })
	var got []string
	for _, r := range rows {
		got = append(got, r.name)
	}
	want := []string{"old.dlq", "deep.dlq", "shallow.dlq", "empty.dlq", "work.b", "work.a"}
	if !slices.Equal(got, want) {
		t.Fatalf("order %v, want %v", got, want)
	}
}
