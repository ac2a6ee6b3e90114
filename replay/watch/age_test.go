package watch

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestTopGroups: the largest groups first (ties by name), the rest summed
// as "other", an empty error text as "none"; no "other" when every group
// fits.
func TestTopGroups(t *testing.T) {
	counts := map[string]int64{"timeout after <n>s": 5, "ledger <n>": 3, "": 2, "bad amount": 2, "rare": 1}
	cases := []struct {
		top  int
		want []GroupCount
	}{
		{2, []GroupCount{{Group: "timeout after <n>s", Count: 5}, {Group: "ledger <n>", Count: 3}, {Group: GroupOther, Count: 5}}},
		{3, []GroupCount{{Group: "timeout after <n>s", Count: 5}, {Group: "ledger <n>", Count: 3}, {Group: "bad amount", Count: 2}, {Group: GroupOther, Count: 3}}},
		{4, []GroupCount{{Group: "timeout after <n>s", Count: 5}, {Group: "ledger <n>", Count: 3}, {Group: "bad amount", Count: 2}, {Group: GroupNone, Count: 2}, {Group: GroupOther, Count: 1}}},
		{5, []GroupCount{{Group: "timeout after <n>s", Count: 5}, {Group: "ledger <n>", Count: 3}, {Group: "bad amount", Count: 2}, {Group: GroupNone, Count: 2}, {Group: "rare", Count: 1}}},
		{10, []GroupCount{{Group: "timeout after <n>s", Count: 5}, {Group: "ledger <n>", Count: 3}, {Group: "bad amount", Count: 2}, {Group: GroupNone, Count: 2}, {Group: "rare", Count: 1}}},
	}
	for _, c := range cases {
		got := topGroups(counts, nil, c.top)
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("top %d: %v, want %v", c.top, got, c.want)
		}
		var sum int64
		for _, g := range got {
			sum += g.Count
		}
		if sum != 13 {
			t.Errorf("top %d: the groups sum to %d, want every message (13)", c.top, sum)
		}
	}
	if got := topGroups(map[string]int64{}, nil, 3); len(got) != 0 {
		t.Errorf("no messages: %v, want no groups", got)
	}
}

// TestHeadAgeRule: the head's own parked time wins; a head without one is
// dated when the watch first saw it there, and keeps that date while it
// stays the head; a new head without one gets a new date.
func TestHeadAgeRule(t *testing.T) {
	t0 := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	parked := t0.Add(-2 * time.Hour)
	var h headAges
	if at, fromHeader := h.observe("a", parked, t0); !at.Equal(parked) || !fromHeader {
		t.Errorf("with a parked time: %v %v, want %v from the header", at, fromHeader, parked)
	}
	if at, fromHeader := h.observe("b", time.Time{}, t0.Add(time.Minute)); !at.Equal(t0.Add(time.Minute)) || fromHeader {
		t.Errorf("first sight of b: %v %v", at, fromHeader)
	}
	if at, _ := h.observe("b", time.Time{}, t0.Add(5*time.Minute)); !at.Equal(t0.Add(time.Minute)) {
		t.Errorf("b still the head: %v, want its first sight %v", at, t0.Add(time.Minute))
	}
	if at, _ := h.observe("c", time.Time{}, t0.Add(6*time.Minute)); !at.Equal(t0.Add(6 * time.Minute)) {
		t.Errorf("c, a new head: %v, want %v", at, t0.Add(6*time.Minute))
	}
}

// TestDepthAgeRule: for a queue whose messages the watch does not read,
// the messages there at the first look are dated then, later ones when
// the depth grew, and departures take the oldest first; counted arrivals
// reveal departures the depth alone hides.
func TestDepthAgeRule(t *testing.T) {
	t0 := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	at := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	var a depthAges
	steps := []struct {
		depth, arrivals int64
		known           bool
		want            time.Time
		what            string
	}{
		{3, 10, true, at(0), "3 there at the first look"},
		{5, 12, true, at(0), "2 more"},
		{2, 12, true, at(1), "3 left: the first run and none of the second"},
		{2, 14, true, at(3), "2 came and 2 left: the depth alone would not say"},
		{0, 14, true, time.Time{}, "empty"},
		{4, 18, true, at(5), "4 new"},
		{4, 3, true, at(5), "a counter reset (node restart): nothing more is known"},
		{1, 0, false, at(5), "no statistics: 3 left"},
		{6, 0, false, at(5), "no statistics: 5 came"},
	}
	for i, s := range steps {
		got := a.observe(s.depth, s.arrivals, s.known, at(i))
		if !got.Equal(s.want) {
			t.Errorf("step %d (%s): oldest %v, want %v", i, s.what, got, s.want)
		}
	}
}

// TestOldestAge: 0 for an empty parking lot or an unknown time, never
// negative (a clock behind the broker's).
func TestOldestAge(t *testing.T) {
	now := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	cases := []struct {
		s    Snapshot
		want time.Duration
	}{
		{Snapshot{Depth: 3, OldestParkedAt: now.Add(-90 * time.Second)}, 90 * time.Second},
		{Snapshot{Depth: 0, OldestParkedAt: now.Add(-90 * time.Second)}, 0},
		{Snapshot{Depth: 3}, 0},
		{Snapshot{Depth: 3, OldestParkedAt: now.Add(time.Second)}, 0},
	}
	for _, c := range cases {
		if got := c.s.OldestAge(now); got != c.want {
			t.Errorf("%+v: age %v, want %v", c.s, got, c.want)
		}
	}
}

// TestTopGroupsKeepsReservedNamesApart: an error text that is itself
// "none" or "other" gets a label of its own (quoted), so no two series
// share one (which would fail every scrape).
func TestTopGroupsKeepsReservedNamesApart(t *testing.T) {
	got := topGroups(map[string]int64{"none": 3, "other": 2, "": 1}, nil, 5)
	want := []GroupCount{{Group: `"none"`, Count: 3}, {Group: `"other"`, Count: 2}, {Group: GroupNone, Count: 1}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%v, want %v", got, want)
	}
	got = topGroups(map[string]int64{"other": 3, "a": 2, "b": 1}, nil, 1)
	want = []GroupCount{{Group: `"other"`, Count: 3}, {Group: GroupOther, Count: 3}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("top 1: %v, want %v", got, want)
	}
}

// TestTopGroupsKeepEachGroupsOldestParkedTime: each top group carries the
// oldest parked time of its messages (by the group's key, before "" and
// the reserved names are renamed); "other" carries none.
func TestTopGroupsKeepEachGroupsOldestParkedTime(t *testing.T) {
	t0 := time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)
	counts := map[string]int64{"ledger <n>": 3, "": 2, "other": 2, "rare": 1}
	oldest := map[string]time.Time{"ledger <n>": t0, "": t0.Add(time.Minute), "other": t0.Add(2 * time.Minute), "rare": t0.Add(3 * time.Minute)}
	got := topGroups(counts, oldest, 3)
	want := []GroupCount{
		{Group: "ledger <n>", Count: 3, OldestParkedAt: t0},
		{Group: `"other"`, Count: 2, OldestParkedAt: t0.Add(2 * time.Minute)},
		{Group: GroupNone, Count: 2, OldestParkedAt: t0.Add(time.Minute)},
		{Group: GroupOther, Count: 1},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%v\nwant %v", got, want)
	}
}

// TestTopGroupsMaskCredentials: a group is a label Prometheus stores and
// alerts carry, so a password a handler's error quoted is masked, and two
// groups that differ only by it are one (two series with one label set
// would fail the scrape).
func TestTopGroupsMaskCredentials(t *testing.T) {
	t0 := time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)
	counts := map[string]int64{
		"connect postgres://app:S3cret@db/app: refused": 2,
		"connect postgres://app:0ther@db/app: refused":  1,
		"ledger down": 1,
	}
	oldest := map[string]time.Time{"connect postgres://app:S3cret@db/app: refused": t0.Add(time.Minute), "connect postgres://app:0ther@db/app: refused": t0}
	got := topGroups(counts, oldest, 5)
	if len(got) != 2 || got[0].Count != 3 || !got[0].OldestParkedAt.Equal(t0) || got[1].Group != "ledger down" {
		t.Fatalf("%v, want the two connect groups as one of 3 (oldest %v), then ledger down", got, t0)
	}
	if g := got[0].Group; strings.Contains(g, "S3cret") || strings.Contains(g, "0ther") || !strings.Contains(g, "postgres://app:") {
		t.Errorf("group %q, want the URL with its password masked", g)
	}
}
