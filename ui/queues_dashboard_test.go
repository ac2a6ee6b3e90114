package ui

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/replay/watch"
)

func dashboardScreen(fb *fakeBackend) *queuesScreen {
	c := &common{ctx: context.Background(), backend: fb, styles: NewStyles(asciiRenderer()), keys: DefaultKeyMap(), now: func() time.Time { return testNow }, workers: newWorkers(), width: 140, height: 20, refresh: -1}
	return newQueuesScreen(c)
}

// TestQueuesScreenDashboardColumns: the first listing paints at once; the
// ages and last hour's arrivals come from a read of their own, and only
// then does a scan count the error groups (TOP ERROR); a later read
// without a scan keeps the groups.
func TestQueuesScreenDashboardColumns(t *testing.T) {
	fb := newFakeBackend(t.TempDir())
	fb.lots = []watch.Snapshot{
		{Queue: "a.dlq", Found: true, Depth: 50, OldestParkedAt: testNow.Add(-2 * time.Minute), Source: watch.AgeHeader,
			TopGroups: []watch.GroupCount{{Group: "ledger down <n>", Count: 40}, {Group: watch.GroupOther, Count: 10}}},
		{Queue: "b.dlq", Found: true, Depth: 1, OldestParkedAt: testNow.Add(-3 * time.Hour), Source: watch.AgeHeader},
	}
	fb.lastHour = map[string]int64{"a.dlq": 48}
	q := dashboardScreen(fb)
	rows := []QueueRow{
		{QueueInfo: broker.QueueInfo{Name: "a.dlq", Type: "classic", Messages: 50}, ParkingLot: true},
		{QueueInfo: broker.QueueInfo{Name: "b.dlq", Type: "classic", Messages: 1}, ParkingLot: true},
	}
	_, read := q.Update(queuesLoadedMsg{rows: rows})
	first := q.View()
	for _, want := range []string{"NEW 1H", "TOP ERROR", "a.dlq", "b.dlq"} {
		if !strings.Contains(first, want) {
			t.Errorf("the first paint lacks %q:\n%s", want, first)
		}
	}
	if read == nil {
		t.Fatal("the first listing did not ask for the parking lots")
	}
	_, scan := q.Update(read())
	if fb.scans != 0 || scan == nil {
		t.Fatalf("the first read scanned (%d) or asked for no scan after it", fb.scans)
	}
	view := q.View()
	if !strings.Contains(view, "48") || strings.Contains(view, "40 × ledger") {
		t.Errorf("after the first read: arrivals 48, no groups yet wanted:\n%s", view)
	}
	_, again := q.Update(scan())
	if fb.scans != 1 || again != nil {
		t.Fatalf("scans %d, another asked: %v", fb.scans, again != nil)
	}
	view = q.View()
	for _, line := range strings.Split(view, "\n") {
		switch {
		case strings.Contains(line, "a.dlq") && !(strings.Contains(line, "2m0s") && strings.Contains(line, " 48 ") && strings.Contains(line, "40 × ledger down")):
			t.Errorf("a.dlq: 2m0s, 48 arrivals, 40 × ledger down… wanted: %q", line)
		case strings.Contains(line, "b.dlq") && !(strings.Contains(line, "3h0m") && strings.Count(line, " - ") >= 2):
			t.Errorf("b.dlq: 3h0m, arrivals and group not known (-) wanted: %q", line)
		}
	}
	if ib, ia := strings.Index(view, "b.dlq"), strings.Index(view, "a.dlq"); ib > ia {
		t.Errorf("b.dlq (3h old) not first:\n%s", view)
	}
	// A refresh reads again without groups, and keeps the last scan's.
	_, cmd := q.Update(tea.KeyMsg{Type: tea.KeyCtrlR})
	if cmd == nil {
		t.Fatal("ctrl+r read nothing")
	}
	q.Update(read())
	if !strings.Contains(q.View(), "40 × ledger down") {
		t.Errorf("a read without a scan dropped the groups:\n%s", q.View())
	}
}

// TestOpeningAQueueStopsTheScanFirst: enter while the groups are being
// counted cancels the scan and opens the queue only once the scan returned
// (every message it held given back), so the queue is browsed whole.
func TestOpeningAQueueStopsTheScanFirst(t *testing.T) {
	fb := newFakeBackend(t.TempDir())
	fb.lots = []watch.Snapshot{{Queue: "a.dlq", Found: true, Depth: 5}}
	fb.scanGate = make(chan struct{}) // never opened: the scan ends only when cancelled
	q := dashboardScreen(fb)
	_, read := q.Update(queuesLoadedMsg{rows: []QueueRow{{QueueInfo: broker.QueueInfo{Name: "a.dlq", Type: "classic", Messages: 5}, ParkingLot: true}}})
	_, scan := q.Update(read())
	scanned := make(chan tea.Msg, 1)
	go func() { scanned <- scan() }()
	_, open := q.Update(tea.KeyMsg{Type: tea.KeyEnter})
	if open == nil {
		t.Fatal("enter opened nothing")
	}
	opened := make(chan tea.Msg, 1)
	go func() { opened <- open() }()
	var res tea.Msg
	select {
	case res = <-scanned:
	case <-time.After(5 * time.Second):
		t.Fatal("opening the queue did not stop the scan")
	}
	if m, ok := res.(lotsLoadedMsg); !ok || !errors.Is(m.err, context.Canceled) {
		t.Errorf("the scan ended with %#v, want a cancelled read", res)
	}
	select {
	case m := <-opened:
		if p, ok := m.(pushMsg); !ok || p.s.Queue() != "a.dlq" {
			t.Errorf("opening gave %#v, want the messages screen of a.dlq", m)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the queue did not open after the scan ended")
	}
	q.Update(res) // the cancelled read changes nothing and asks for nothing more
	if fb.scans != 1 {
		t.Errorf("%d scans, want 1", fb.scans)
	}
}

// TestQueuesScreenReadsLotsOnlyWhenShown: the periodic read of the parking
// lots (head reads) pauses while a queue opened from the screen is on top,
// and a fresh read comes when the screen is shown again.
func TestQueuesScreenReadsLotsOnlyWhenShown(t *testing.T) {
	fb := newFakeBackend(t.TempDir())
	fb.lots = []watch.Snapshot{{Queue: "a.dlq", Found: true, Depth: 5}}
	q := dashboardScreen(fb)
	_, read := q.Update(queuesLoadedMsg{rows: []QueueRow{{QueueInfo: broker.QueueInfo{Name: "a.dlq", Type: "classic", Messages: 5}, ParkingLot: true}}})
	_, scan := q.Update(read())
	q.Update(scan())
	if _, cmd := q.Update(lotsTickMsg{}); cmd == nil {
		t.Fatal("a tick on the shown screen read nothing")
	} else if _, ok := cmd().(lotsLoadedMsg); !ok {
		t.Fatal("a tick on the shown screen did not read the parking lots")
	}
	_, open := q.Update(tea.KeyMsg{Type: tea.KeyEnter})
	if _, ok := open().(pushMsg); !ok {
		t.Fatal("enter did not open the queue")
	}
	if _, cmd := q.Update(lotsTickMsg{}); cmd != nil {
		t.Error("a tick read the parking lots while a queue is open on top")
	}
	if _, cmd := q.Update(shownMsg{}); cmd == nil {
		t.Error("shown again, the screen read nothing")
	} else if _, ok := cmd().(lotsLoadedMsg); !ok {
		t.Error("shown again, the screen did not read the parking lots")
	}
}

// TestQueuesScreenUnderAQueueReadsNothing: `parkinglot tui QUEUE` puts the
// queues screen under the queue's list; it reads no parking lot (no head
// read, no scan holding the queue's messages while they are replayed)
// until it is shown.
func TestQueuesScreenUnderAQueueReadsNothing(t *testing.T) {
	fb := newFakeBackend(t.TempDir())
	fb.lots = []watch.Snapshot{{Queue: "a.dlq", Found: true, Depth: 5}}
	m := New(context.Background(), fb, Options{Queue: "a.dlq", Refresh: -1, Renderer: asciiRenderer()})
	defer m.Close()
	q := m.stack[0].(*queuesScreen)
	rows := []QueueRow{{QueueInfo: broker.QueueInfo{Name: "a.dlq", Type: "classic", Messages: 5}, ParkingLot: true}}
	if _, cmd := q.Update(queuesLoadedMsg{rows: rows}); cmd != nil {
		t.Fatal("under the queue's list, the listing asked for the parking lots")
	}
	if _, cmd := q.Update(lotsLoadedMsg{}); cmd != nil {
		t.Fatal("under the queue's list, a read started a scan")
	}
	if fb.scans != 0 {
		t.Fatalf("%d scans under the queue's list", fb.scans)
	}
	if _, cmd := q.Update(shownMsg{}); cmd == nil {
		t.Fatal("shown, the screen read nothing")
	}
}

// TestQueuesScreenMarksADeliveryLimit: a parking lot with a finite
// delivery limit is marked "!" and counted in the info line, which says,
// for the selected one, what a lost connection does and the command that
// lifts it; an unlimited one is not marked.
func TestQueuesScreenMarksADeliveryLimit(t *testing.T) {
	fb := newFakeBackend(t.TempDir())
	fb.lots = []watch.Snapshot{
		{Queue: "q.dlq", Found: true, Depth: 3, Type: "quorum", DeliveryLimit: 20, LimitKnown: true, OldestParkedAt: testNow.Add(-time.Hour), Source: watch.AgeHeader},
		{Queue: "c.dlq", Found: true, Depth: 1, Type: "classic", DeliveryLimit: -1, LimitKnown: true, OldestParkedAt: testNow.Add(-time.Minute), Source: watch.AgeHeader},
	}
	q := dashboardScreen(fb)
	rows := []QueueRow{
		{QueueInfo: broker.QueueInfo{Name: "q.dlq", Type: "quorum", Messages: 3}, ParkingLot: true},
		{QueueInfo: broker.QueueInfo{Name: "c.dlq", Type: "classic", Messages: 1}, ParkingLot: true},
	}
	_, read := q.Update(queuesLoadedMsg{rows: rows})
	q.Update(read())
	view := q.View()
	if !strings.Contains(view, "2 parking lot(s) (P), 1 with a delivery limit (!)") {
		t.Errorf("the info line does not count the lot with a limit:\n%s", view)
	}
	if !strings.Contains(view, "! delivery limit 20, a lost connection counts: parkinglot protect q.dlq ·") {
		t.Errorf("the selected lot's risk is not said:\n%s", view)
	}
	for _, line := range strings.Split(view, "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) > 1 && f[1] == "q.dlq" && f[0] != "▸P!":
			t.Errorf("q.dlq (limit 20, selected) marked %q, want ▸P!", f[0])
		case len(f) > 1 && f[1] == "c.dlq" && f[0] != "P":
			t.Errorf("c.dlq (unlimited) marked %q, want P", f[0])
		}
	}
	q.Update(tea.KeyMsg{Type: tea.KeyDown})
	if strings.Contains(q.View(), "parkinglot protect") {
		t.Errorf("the unlimited lot selected, the info line still offers protect:\n%s", q.View())
	}
}

// TestQueuesScreenTopErrorStaysLive: TOP ERROR follows the lots. A read
// that finds a depth moved counts the groups again once rescanGap passed
// since the last count (not before: a count reads every lot whole), and
// one that finds nothing moved does not; a lot that emptied shows no
// error at once, without a count.
func TestQueuesScreenTopErrorStaysLive(t *testing.T) {
	fb := newFakeBackend(t.TempDir())
	fb.lots = []watch.Snapshot{
		{Queue: "a.dlq", Found: true, Depth: 15, Source: watch.AgeHeader, OldestParkedAt: testNow.Add(-time.Minute),
			TopGroups: []watch.GroupCount{{Group: "ledger down <n>", Count: 15}}},
		{Queue: "b.dlq", Found: true, Depth: 2, Source: watch.AgeHeader, OldestParkedAt: testNow.Add(-time.Minute),
			TopGroups: []watch.GroupCount{{Group: "schema <n>", Count: 2}}},
	}
	q := dashboardScreen(fb)
	now := testNow
	q.c.now = func() time.Time { return now }
	rows := []QueueRow{
		{QueueInfo: broker.QueueInfo{Name: "a.dlq", Type: "classic", Messages: 15}, ParkingLot: true},
		{QueueInfo: broker.QueueInfo{Name: "b.dlq", Type: "classic", Messages: 2}, ParkingLot: true},
	}
	_, read := q.Update(queuesLoadedMsg{rows: rows})
	_, scan := q.Update(read())
	q.Update(scan())
	if !strings.Contains(q.View(), "15 × ledger down") || !strings.Contains(q.View(), "2 × schema") {
		t.Fatalf("the first count's groups not shown:\n%s", q.View())
	}
	lineOf := func(name string) string {
		for _, l := range strings.Split(q.View(), "\n") {
			if strings.Contains(l, name) {
				return l
			}
		}
		return ""
	}
	// Nothing moved, long after: no count.
	now = now.Add(time.Hour)
	if _, cmd := q.Update(read()); cmd != nil || fb.scans != 1 {
		t.Fatalf("a read where nothing moved counted again (scans %d)", fb.scans)
	}
	// b.dlq is emptied and a new error arrives in a.dlq.
	fb.mu.Lock()
	fb.lots[0].Depth, fb.lots[0].TopGroups = 16, []watch.GroupCount{{Group: "ledger down <n>", Count: 15}, {Group: "tls handshake", Count: 1}}
	fb.lots[1].Depth, fb.lots[1].TopGroups = 0, nil
	fb.mu.Unlock()
	rows[0].Messages, rows[1].Messages = 16, 0
	q.Update(queuesLoadedMsg{rows: append([]QueueRow(nil), rows...)})
	if l := lineOf("b.dlq"); strings.Contains(l, "schema") {
		t.Errorf("the emptied b.dlq still shows its old error: %q", l)
	}
	_, scan = q.Update(read())
	if scan == nil {
		t.Fatal("a read that found the depths moved did not count the groups again")
	}
	q.Update(scan())
	if fb.scans != 2 {
		t.Fatalf("scans %d, want 2", fb.scans)
	}
	// Moved again at once: not within rescanGap of the last count.
	fb.mu.Lock()
	fb.lots[0].Depth = 17
	fb.mu.Unlock()
	now = now.Add(rescanGap / 2)
	if _, cmd := q.Update(read()); cmd != nil {
		t.Errorf("counted again within rescanGap of the last count")
	}
	now = now.Add(rescanGap)
	if _, cmd := q.Update(read()); cmd == nil {
		t.Errorf("no count once rescanGap passed with a depth moved")
	}
}

// TestQueuesScreenMarksALotThatGrew: a parking lot whose depth rose
// between two listings is marked ↑ beside its depth for a minute, and the
// info line says what ↑ means when it is selected; a queue that is no
// parking lot is not marked.
func TestQueuesScreenMarksALotThatGrew(t *testing.T) {
	fb := newFakeBackend(t.TempDir())
	q := dashboardScreen(fb)
	now := testNow
	q.c.now = func() time.Time { return now }
	listing := func(lot, work int64) {
		q.Update(queuesLoadedMsg{rows: []QueueRow{
			{QueueInfo: broker.QueueInfo{Name: "a.dlq", Type: "classic", Messages: lot}, ParkingLot: true},
			{QueueInfo: broker.QueueInfo{Name: "work", Type: "classic", Messages: work}},
		}})
	}
	listing(5, 1)
	if strings.Contains(q.View(), "↑") {
		t.Fatalf("marked at the first listing:\n%s", q.View())
	}
	now = now.Add(2 * time.Second)
	listing(7, 9)
	view := q.View()
	if !strings.Contains(view, "7↑") || !strings.Contains(view, "↑ grew in the last minute") || strings.Contains(view, "9↑") {
		t.Errorf("a.dlq grew from 5 to 7: want 7↑ and the info line; work (no parking lot) unmarked:\n%s", view)
	}
	now = now.Add(roseFor)
	listing(7, 9)
	if strings.Contains(q.View(), "↑") {
		t.Errorf("still marked a minute later:\n%s", q.View())
	}
}
