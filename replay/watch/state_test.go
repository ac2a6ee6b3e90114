package watch

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

// TestStateFileKeepsFirstSeenAgesAcrossARestart: what one watch saved of a
// parking lot (the head it first saw and when, the depth rule's runs and
// counters) is what the next one restores, for that vhost and queue alone;
// a lot not read since the start is kept in the file for a later run; a
// file of another format, or not JSON, is no state.
func TestStateFileKeepsFirstSeenAgesAcrossARestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state", "watch.json")
	t0 := time.Date(2026, 12, 7, 3, 0, 0, 0, time.UTC)
	first := New(Options{Vhosts: []string{"/"}, Queues: []string{"a.dlq", "b.dlq"}, StateFile: path, Now: func() time.Time { return t0.Add(time.Hour) }})
	a := first.vhosts[0].queues["a.dlq"]
	a.restored = true
	a.head = headAges{id: "m-1", at: t0}
	a.depth = depthAges{runs: []arrival{{3, t0}, {2, t0.Add(time.Minute)}}, depth: 5, arrivals: 7, arrivalsKnown: true, started: true}
	a.rawArrivals, a.republished = 9, 2
	first.saved = map[string]savedQueue{stateKey("/", "c.dlq"): {Vhost: "/", Queue: "c.dlq", HeadID: "x", HeadSeen: t0}}
	if err := first.saveState(t0.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("state file: %v %v, want mode 0600", fi, err)
	}

	next := New(Options{Vhosts: []string{"/"}, Queues: []string{"a.dlq", "b.dlq"}, StateFile: path})
	next.loadState()
	for _, q := range []string{"a.dlq", "b.dlq"} {
		next.restore(next.vhosts[0], q, next.vhosts[0].queues[q])
	}
	got := next.vhosts[0].queues["a.dlq"]
	if got.head != a.head || !reflect.DeepEqual(got.depth, a.depth) || got.rawArrivals != 9 || got.republished != 2 {
		t.Errorf("restored head %+v depth %+v raw %d republished %d, want %+v %+v 9 2", got.head, got.depth, got.rawArrivals, got.republished, a.head, a.depth)
	}
	if b := next.vhosts[0].queues["b.dlq"]; b.head != (headAges{}) || b.depth.started {
		t.Errorf("b.dlq was not in the file, restored %+v %+v", b.head, b.depth)
	}
	if _, ok := next.saved[stateKey("/", "c.dlq")]; !ok {
		t.Error("c.dlq, not read by the first watch, was dropped from the file")
	}

	for _, bad := range []string{`{"version": 99, "queues": [{"vhost": "/", "queue": "a.dlq", "head_id": "m-1"}]}`, `not json`} {
		if err := os.WriteFile(path, []byte(bad), 0o600); err != nil {
			t.Fatal(err)
		}
		w := New(Options{Vhosts: []string{"/"}, Queues: []string{"a.dlq"}, StateFile: path})
		w.loadState()
		if len(w.saved) != 0 {
			t.Errorf("state file %q was used: %v", bad, w.saved)
		}
	}
}

// TestFirstSeenAgeKeepsTheDepthRulesDate: a head without a parked time
// that is new to the head, not to the queue (a reorder, a refresh), is
// dated by the depth rule when that is earlier.
func TestFirstSeenAgeKeepsTheDepthRulesDate(t *testing.T) {
	t0 := time.Date(2026, 12, 7, 3, 0, 0, 0, time.UTC)
	st := &queueState{}
	st.depthAt = st.depth.observe(4, 0, false, t0)
	if at, fromHeader := st.firstSeen("m-1", time.Time{}, t0); !at.Equal(t0) || fromHeader {
		t.Fatalf("first head: %v %v, want %v", at, fromHeader, t0)
	}
	later := t0.Add(10 * time.Minute)
	st.depthAt = st.depth.observe(4, 0, false, later)
	if at, _ := st.firstSeen("m-2", time.Time{}, later); !at.Equal(t0) {
		t.Errorf("a new head of the same 4 messages dated %v, want the depth rule's %v", at, t0)
	}
	parked := t0.Add(-time.Hour)
	if at, fromHeader := st.firstSeen("m-3", parked, later); !at.Equal(parked) || !fromHeader {
		t.Errorf("a head with its own time: %v %v, want %v from the message", at, fromHeader, parked)
	}
}
