package ui

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/replay"
)

// TestMessageListShowsArrivals: once the list is loaded, a message that
// enters the lot is counted ("1 new since opened"), the list reloads to
// show it in the queue's order, marked +; a lot that cannot be tapped
// says so and lists as before.
func TestMessageListShowsArrivals(t *testing.T) {
	fb := newFakeBackend(t.TempDir())
	fb.arrivals = make(chan replay.Summary)
	fb.add("a.dlq", "m-1", "ledger down", time.Minute, `{}`)
	fb.add("a.dlq", "m-2", "ledger down", time.Minute, `{}`)
	hs := newHarness(t, fb, "a.dlq", 120, 20)
	hs.until("the list", hs.loaded)
	fb.add("a.dlq", "m-3", "tls handshake failed", 0, `{}`)
	go func() { fb.arrivals <- replay.Summary{ID: "m-3"} }()
	hs.untilScreen("1 new since opened (+)")
	hs.untilScreen("+m-3")
	screen := hs.screen()
	if i1, i3 := strings.Index(screen, "m-1"), strings.Index(screen, "m-3"); i1 < 0 || i3 < i1 || strings.Contains(screen, "+m-1") {
		t.Errorf("m-3 not listed after m-1, or m-1 marked new:\n%s", screen)
	}

	fb2 := newFakeBackend(t.TempDir())
	fb2.tailErr = errors.Join(broker.ErrUntappable)
	fb2.add("b.dlq", "m-1", "ledger down", time.Minute, `{}`)
	hs2 := newHarness(t, fb2, "b.dlq", 120, 20)
	hs2.until("the list", hs2.loaded)
	hs2.untilScreen("no live arrivals for b.dlq")
}

// TestArrivalsInAQuorumLotWithALimitAreCountedNotListed: where every pass
// holds messages a lost connection counts against (a quorum lot with a
// finite delivery limit), an arrival is counted and the list does not
// reload itself: ctrl+r lists it.
func TestArrivalsInAQuorumLotWithALimitAreCountedNotListed(t *testing.T) {
	fb := newFakeBackend(t.TempDir())
	fb.arrivals = make(chan replay.Summary)
	fb.quorum = map[string]bool{"q.dlq": true}
	fb.add("q.dlq", "m-1", "ledger down", time.Minute, `{}`)
	hs := newHarness(t, fb, "q.dlq", 120, 20)
	hs.until("the list", hs.loaded)
	browses := fb.called("browse q.dlq")
	fb.add("q.dlq", "m-2", "ledger down", 0, `{}`)
	go func() { fb.arrivals <- replay.Summary{ID: "m-2"} }()
	hs.untilScreen("1 new since opened (+), ctrl+r lists them")
	hs.drain()
	if n := fb.called("browse q.dlq"); n != browses {
		t.Errorf("%d browse(s) after the arrival, want none: the list reloaded a quorum lot with a limit by itself", n-browses)
	}
}

// TestNoManagementForArrivalsIsSaidOncePerSession: without the management
// API no list can tail its lot; the first list says so, the lists opened
// after it do not repeat it.
func TestNoManagementForArrivalsIsSaidOncePerSession(t *testing.T) {
	c := &common{}
	err := fmt.Errorf("tail: %w", broker.ErrNoManagement)
	for i, want := range []bool{true, false, false} {
		m := &messagesScreen{c: c, queue: "a.dlq", live: &live{}}
		if _, cmd := m.Update(liveEndedMsg{m.live, err}); (cmd != nil) != want {
			t.Errorf("list %d: said it %v, want %v", i+1, cmd != nil, want)
		}
	}
	m := &messagesScreen{c: c, queue: "b.dlq", live: &live{}}
	if _, cmd := m.Update(liveEndedMsg{m.live, broker.ErrUntappable}); cmd == nil {
		t.Error("an untappable lot was not said after the management API was")
	}
}

// TestAListSaysWhenItsTailLostArrivals: the tail's connection was lost and
// the lot tapped again: the list says arrivals in between were not seen,
// and goes on counting what arrives after.
func TestAListSaysWhenItsTailLostArrivals(t *testing.T) {
	fb := newFakeBackend(t.TempDir())
	fb.arrivals = make(chan replay.Summary)
	fb.gaps = make(chan replay.TailGap)
	fb.add("a.dlq", "m-1", "ledger down", time.Minute, `{}`)
	hs := newHarness(t, fb, "a.dlq", 160, 20)
	hs.until("the list", hs.loaded)
	lost := time.Date(2026, 12, 7, 23, 4, 5, 0, time.UTC)
	go func() { fb.gaps <- replay.TailGap{Lost: lost, Retapped: lost.Add(3 * time.Second)} }()
	hs.untilScreen("tapped again at 23:04:08")
	fb.add("a.dlq", "m-2", "ledger down", 0, `{}`)
	go func() { fb.arrivals <- replay.Summary{ID: "m-2"} }()
	hs.untilScreen("1 new since opened (+)")
}

// TestArrivalsThatCameBackFromAReplayAreCounted: after a replay, the
// copies that fail again arrive marked as come back: the list counts them
// apart from new failures.
func TestArrivalsThatCameBackFromAReplayAreCounted(t *testing.T) {
	fb := newFakeBackend(t.TempDir())
	fb.arrivals = make(chan replay.Summary)
	fb.add("a.dlq", "m-1", "ledger down", time.Minute, `{}`)
	hs := newHarness(t, fb, "a.dlq", 160, 20)
	hs.until("the list", hs.loaded)
	back := replay.Summary{ID: "m-2"}
	back.Facts.CameBack = true
	go func() {
		fb.arrivals <- back
		fb.arrivals <- replay.Summary{ID: "m-3"}
	}()
	hs.untilScreen("2 new since opened (+), 1 came back from a replay")
}
