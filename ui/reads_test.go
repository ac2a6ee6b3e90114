package ui

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/parkinglot/parkinglot/replay"
)

// readsBackend is the fake backend that records when each read of a queue
// (a browse, a plan, an action's pass, an edit's fetch) begins and ends,
// and which began while another read of the same queue was still under
// way: AMQP has no peek, so each of the two would miss what the other
// holds.
type readsBackend struct {
	*fakeBackend

	rmu      sync.Mutex
	active   map[string][]string // queue → the reads under way
	overlaps []string
	// planGate, when set, holds each plan until it is closed or the plan's
	// ctx ends; a cancelled plan takes a moment to give back.
	planGate  chan struct{}
	cancelled int // plans that ended by their ctx
}

func newReadsBackend(fb *fakeBackend) *readsBackend {
	return &readsBackend{fakeBackend: fb, active: map[string][]string{}}
}

func (b *readsBackend) begin(queue, what string) func() {
	b.record("begin " + what + " " + queue)
	b.rmu.Lock()
	defer b.rmu.Unlock()
	if others := b.active[queue]; len(others) > 0 {
		b.overlaps = append(b.overlaps, fmt.Sprintf("%s began while %v read %s", what, others, queue))
	}
	b.active[queue] = append(b.active[queue], what)
	return func() {
		b.rmu.Lock()
		defer b.rmu.Unlock()
		as := b.active[queue]
		for i, a := range as {
			if a == what {
				b.active[queue] = append(as[:i:i], as[i+1:]...)
				break
			}
		}
	}
}

func (b *readsBackend) overlapList() []string {
	b.rmu.Lock()
	defer b.rmu.Unlock()
	return append([]string(nil), b.overlaps...)
}

func (b *readsBackend) cancelledPlans() int {
	b.rmu.Lock()
	defer b.rmu.Unlock()
	return b.cancelled
}

func (b *readsBackend) Browse(ctx context.Context, req BrowseRequest) (BrowseResult, error) {
	defer b.begin(req.Queue, "browse")()
	return b.fakeBackend.Browse(ctx, req)
}

func (b *readsBackend) Plan(ctx context.Context, req ActionRequest) (Plan, error) {
	defer b.begin(req.Queue, "plan")()
	b.rmu.Lock()
	gate := b.planGate
	b.rmu.Unlock()
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			time.Sleep(20 * time.Millisecond) // giving back takes a moment
			b.rmu.Lock()
			b.cancelled++
			b.rmu.Unlock()
			return Plan{}, ctx.Err()
		}
	}
	return b.fakeBackend.Plan(ctx, req)
}

func (b *readsBackend) Delete(ctx context.Context, req ActionRequest) (replay.Result, error) {
	defer b.begin(req.Queue, "delete")()
	return b.fakeBackend.Delete(ctx, req)
}

func (b *readsBackend) Replay(ctx context.Context, req ActionRequest) (replay.Result, error) {
	defer b.begin(req.Queue, "replay")()
	return b.fakeBackend.Replay(ctx, req)
}

func (b *readsBackend) Export(ctx context.Context, req ActionRequest, path string) (replay.Result, error) {
	defer b.begin(req.Queue, "export")()
	return b.fakeBackend.Export(ctx, req, path)
}

func (b *readsBackend) PrepareEdit(ctx context.Context, queue, id string) (*EditDraft, error) {
	defer b.begin(queue, "prepare-edit")()
	return b.fakeBackend.PrepareEdit(ctx, queue, id)
}

// newReadsHarness is newHarness on a readsBackend.
func newReadsHarness(t *testing.T, b *readsBackend, queue string) *harness {
	t.Helper()
	hs := &harness{t: t, fb: b.fakeBackend, msgs: make(chan tea.Msg, 1024)}
	opts := Options{
		Queue: queue, Renderer: asciiRenderer(), Now: func() time.Time { return testNow },
		Editor: hs.editor, ExportDir: t.TempDir(), Refresh: -1,
	}
	hs.m = New(context.Background(), b, opts)
	t.Cleanup(func() {
		if err := hs.m.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	hs.apply(tea.WindowSizeMsg{Width: 120, Height: 30})
	hs.exec(hs.m.Init())
	return hs
}

// An action started on a message opened while its list is still reading
// the queue (as a search's match opens) stops that read and starts its
// plan or pass only once the read gave every message back.
func TestMessageScreenActionWaitsForTheListsGiveBack(t *testing.T) {
	for _, tc := range []struct {
		key, read string
	}{{"r", "begin plan"}, {"d", "begin delete"}, {"x", "begin export"}} {
		t.Run(tc.key, func(t *testing.T) {
			fb := newFakeBackend(t.TempDir())
			seedDemo(fb)
			fb.holdBrowse, fb.holdAfter = true, 3 // streams 3, then holds the rest
			b := newReadsBackend(fb)
			hs := newReadsHarness(t, b, "demo.error.dlq")
			hs.until("the first messages", func() bool { l := hs.messages(); return l != nil && l.data.len() == 3 })
			hs.press("enter")
			hs.until("the message", func() bool { _, ok := hs.m.top().(*messageScreen); return ok })
			hs.press(tc.key)
			hs.until("the dialog", func() bool { return hs.m.dialog != nil })
			if l := hs.messages(); l.loading || l.feed != nil {
				t.Fatal("the list still reads the queue under the dialog")
			}
			if tc.key != "r" {
				hs.press("enter")
			}
			hs.until(tc.read, func() bool { return fb.called(tc.read) == 1 })
			hs.drain()
			if o := b.overlapList(); len(o) > 0 {
				t.Fatalf("reads of one queue overlapped: %v", o)
			}
		})
	}
}

// A new route plan (ctrl+t, a changed destination) stops the one under
// way and starts once it gave its messages back; closing the dialog stops
// the plan too.
func TestRoutePlanStopsThePreviousOne(t *testing.T) {
	fb := newFakeBackend(t.TempDir())
	seedDemo(fb)
	b := newReadsBackend(fb)
	b.planGate = make(chan struct{}) // never opened: plans end by their ctx
	hs := newReadsHarness(t, b, "demo.error.dlq")
	hs.until("loaded", hs.loaded)
	hs.press("r")
	hs.until("the first plan", func() bool { return fb.called("begin plan") == 1 })
	hs.press("ctrl+t")
	hs.until("the second plan", func() bool { return fb.called("begin plan") == 2 })
	if n := b.cancelledPlans(); n != 1 {
		t.Fatalf("%d plan(s) stopped before the next began, want 1", n)
	}
	hs.press("esc")
	hs.until("the dialog closed", func() bool { return hs.m.dialog == nil })
	hs.until("the last plan stopped", func() bool { return b.cancelledPlans() == 2 })
	if o := b.overlapList(); len(o) > 0 {
		t.Fatalf("reads of one queue overlapped: %v", o)
	}
}

// The list's stopped read gives its messages back before the dialog's
// first plan reads the queue, and the list reloads once the closed
// dialog's plan gave its own back.
func TestRoutePlanAndListReadsTakeTurns(t *testing.T) {
	fb := newFakeBackend(t.TempDir())
	seedDemo(fb)
	fb.holdBrowse, fb.holdAfter = true, 3
	b := newReadsBackend(fb)
	b.planGate = make(chan struct{})
	hs := newReadsHarness(t, b, "demo.error.dlq")
	hs.until("the first messages", func() bool { l := hs.messages(); return l != nil && l.data.len() == 3 })
	hs.press("r")
	hs.until("the plan", func() bool { return fb.called("begin plan") == 1 })
	hs.press("esc")
	hs.until("the list reading again", func() bool { return fb.called("begin browse") == 2 })
	hs.drain()
	if o := b.overlapList(); len(o) > 0 {
		t.Fatalf("reads of one queue overlapped: %v", o)
	}
	if n := b.cancelledPlans(); n != 1 {
		t.Fatalf("%d plan(s) stopped when the dialog closed, want 1", n)
	}
}

func (b *readsBackend) Search(ctx context.Context, req SearchRequest) (replay.SearchResult, error) {
	qs := req.Queues
	if len(qs) == 0 {
		for _, r := range b.fakeBackend.queues {
			if r.ParkingLot {
				qs = append(qs, r.Name)
			}
		}
	}
	for _, q := range qs {
		if !slices.Contains(req.Skip, q) {
			defer b.begin(q, "search")()
		}
	}
	return b.fakeBackend.Search(ctx, req)
}

// A search run again when a person goes back to it from a list opened on
// a match (its parking lot changed by a delete there) waits until that
// list's reload gave its messages back.
func TestSearchAgainWaitsForTheListsGiveBack(t *testing.T) {
	fb := newFakeBackend(t.TempDir())
	seedTwoLots(fb)
	b := newReadsBackend(fb)
	hs := newReadsHarness(t, b, "")
	hs.untilScreen("orders.dlq")
	hs.press("/")
	hs.typeText("gateway timeout")
	hs.press("enter")
	hs.until("the search to end", hs.searchDone)
	hs.press("end", "enter") // ord-0002, in orders.dlq
	hs.until("the message to open", func() bool { ms, ok := hs.m.top().(*messageScreen); return ok && ms.sum.ID == "ord-0002" })
	hs.press("d")
	hs.untilScreen("Delete")
	fb.mu.Lock()
	fb.holdBrowse, fb.holdAfter = true, 1 // the list's reload streams one, then holds on
	fb.mu.Unlock()
	hs.press("enter")
	hs.until("the list reloading", func() bool {
		l := hs.messages()
		return hs.m.dialog == nil && l != nil && hs.m.top() == l && l.feed != nil && fb.called("browse orders.dlq") == 2
	})
	hs.press("esc")
	hs.until("the results searched again", func() bool { return hs.search() != nil && hs.searchDone() && fb.called("search ") == 2 })
	hs.drain()
	if o := b.overlapList(); len(o) > 0 {
		t.Fatalf("reads of one queue overlapped: %v", o)
	}
}
