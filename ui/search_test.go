package ui

import (
	"strings"
	"testing"
	"time"

	"github.com/parkinglot/parkinglot/broker"
)

// seedTwoLots is the demo's parking lot, a second one and a queue that is
// not a parking lot, each holding a "gateway timeout".
func seedTwoLots(fb *fakeBackend) {
	seedDemo(fb)
	fb.queues = append(fb.queues,
		QueueRow{QueueInfo: broker.QueueInfo{Name: "orders.dlq", Type: "quorum"}, ParkingLot: true},
		QueueRow{QueueInfo: broker.QueueInfo{Name: "orders.work", Type: "classic"}})
	fb.add("orders.dlq", "ord-0001", "ledger down 503", 2*time.Hour, `{"order":4711}`)
	fb.add("orders.dlq", "ord-0002", "bank gateway timeout after 5000 ms", 90*time.Minute, `{"order":4712}`)
	fb.add("orders.work", "ord-0003", "bank gateway timeout after 5000 ms", time.Minute, `{"order":4713}`)
}

func startOnQueues(t *testing.T) *harness {
	t.Helper()
	fb := newFakeBackend(t.TempDir())
	seedTwoLots(fb)
	hs := newHarness(t, fb, "", 120, 30)
	hs.untilScreen("orders.dlq")
	return hs
}

func (h *harness) search() *searchScreen {
	s, _ := h.m.top().(*searchScreen)
	return s
}

func (h *harness) searchDone() bool {
	s := h.search()
	return s != nil && !s.running && s.res != nil
}

func TestSearchPromptOpensOnTheQueuesScreen(t *testing.T) {
	hs := startOnQueues(t)
	hs.press("/")
	hs.untilScreen("search every parking lot:")
	if !hs.m.top().Capturing() {
		t.Fatal("the prompt does not capture keys")
	}
	hs.typeText("q?")
	if hs.quit || hs.m.fullHelp {
		t.Fatal("q or ? in the prompt was obeyed, not typed")
	}
	if s := hs.screen(); !strings.Contains(s, "search every parking lot: q?") || !strings.Contains(s, "esc cancel") {
		t.Fatalf("the prompt does not show what was typed, or its keys:\n%s", s)
	}
	hs.press("esc")
	if s := hs.screen(); strings.Contains(s, "search every parking lot:") || len(hs.m.stack) != 1 {
		t.Fatalf("esc did not close the prompt:\n%s", s)
	}
	if n := hs.fb.called("search"); n != 0 {
		t.Fatalf("esc searched (%d)", n)
	}
	hs.press("/", "enter") // nothing typed: nothing searched
	if len(hs.m.stack) != 1 || hs.m.top().Capturing() {
		t.Fatal("enter on an empty prompt did something")
	}
	hs.press("q")
	hs.until("q to quit once the prompt is closed", func() bool { return hs.quit })
}

func TestSearchListsMatchesAcrossParkingLots(t *testing.T) {
	hs := startOnQueues(t)
	gate := hs.fb.holdSearches(make(chan struct{}))
	hs.press("/")
	hs.typeText("Gateway TIMEOUT")
	hs.press("enter")
	// The first parking lot's matches show while the next waits.
	hs.until("the first parking lot's matches", func() bool { s := hs.search(); return s != nil && len(s.matches) == 2 })
	if s := hs.screen(); !strings.Contains(s, "searching") || !strings.Contains(s, "2 matches so far") {
		t.Fatalf("no progress line while searching:\n%s", s)
	}
	close(gate)
	hs.until("the search to end", hs.searchDone)
	s := hs.screen()
	for _, want := range []string{
		`text "Gateway TIMEOUT" in ids, errors and bodies`,
		"3 matches in 2 of 2 parking lot(s), 9 messages looked at, all given back",
		"QUEUE", "ID", "AGE", "ERROR",
		"demo.error.dlq", "pay-0004", "6m0s", "bank gateway timeout after 3000 ms (attempt 4)",
		"orders.dlq", "ord-0002", "1h30m", "bank gateway timeout after 5000 ms",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("results lack %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "ord-0003") {
		t.Errorf("a queue that is not a parking lot was searched:\n%s", s)
	}
	if strings.Contains(s, "left out") {
		t.Errorf("the cap is mentioned though nothing was left out:\n%s", s)
	}
	// An expression is one, as in `list --filter`.
	hs.press("esc")
	hs.untilScreen("parking lot(s) (P)")
	hs.press("/")
	hs.typeText(`body contains "4711" || attempts > 5`)
	hs.press("enter")
	hs.until("the expression's search", hs.searchDone)
	s = hs.screen()
	if !strings.Contains(s, `expr: body contains "4711"`) || !strings.Contains(s, "ord-0001") || !strings.Contains(s, "1 match in 1 of 2") {
		t.Fatalf("the expression did not run as one:\n%s", s)
	}
}

func TestSearchKeepsMatchesUpToItsCap(t *testing.T) {
	hs := startOnQueues(t)
	hs.m.c.searchKeep = 2
	hs.press("/")
	hs.typeText("EUR")
	hs.press("enter")
	hs.until("the search to end", hs.searchDone)
	if got := len(hs.search().matches); got != 2 {
		t.Fatalf("%d matches kept, want the cap, 2", got)
	}
	s := hs.screen()
	if !strings.Contains(s, "4 matches in 1 of 2 parking lot(s)") || !strings.Contains(s, "showing the first 2: 2 more left out (the cap is 2)") {
		t.Fatalf("the cap is not said:\n%s", s)
	}
	// ctrl+r searches again, afresh.
	hs.press("ctrl+r")
	hs.until("the second search to end", func() bool { return hs.fb.called("search") == 2 && hs.searchDone() })
	if got := len(hs.search().matches); got != 2 || !strings.Contains(hs.screen(), "4 matches in 1 of 2") {
		t.Fatalf("search again: %d matches kept:\n%s", got, hs.screen())
	}
}

func TestSearchOpensAMatchInItsQueue(t *testing.T) {
	hs := startOnQueues(t)
	hs.press("/")
	hs.typeText("gateway timeout")
	hs.press("enter")
	hs.until("the search to end", hs.searchDone)
	hs.press("end", "enter") // ord-0002, in orders.dlq
	hs.until("the message to open", func() bool {
		ms, ok := hs.m.top().(*messageScreen)
		return ok && ms.queue == "orders.dlq" && ms.sum.ID == "ord-0002"
	})
	hs.until("the body", func() bool { return strings.Contains(hs.fullContent(), `"order": 4712`) })
	list := hs.messages()
	if list == nil || list.queue != "orders.dlq" {
		t.Fatal("the message was not opened from its queue's list")
	}
	if cur, ok := list.current(); !ok || cur.ID != "ord-0002" {
		t.Fatalf("the list's cursor is on %q, want ord-0002", cur.ID)
	}
	// Every action works as from the queue: delete it.
	hs.press("d")
	hs.untilScreen("Delete")
	hs.press("enter")
	hs.until("the delete", func() bool { return hs.fb.called("delete orders.dlq 1") == 1 })
	hs.until("the list again, the dialog closed", func() bool { return hs.m.dialog == nil && hs.m.top() == list && hs.loaded() })
	if ids := hs.fb.ids("orders.dlq"); len(ids) != 1 || ids[0] != "ord-0001" {
		t.Fatalf("orders.dlq holds %v, want [ord-0001]", ids)
	}
	// esc: the results, where the parking lot the delete changed is
	// searched again, alone; then the queues.
	hs.press("esc")
	hs.until("the results searched again", func() bool { return hs.search() != nil && hs.searchDone() && hs.fb.called("search ") == 2 })
	if hs.fb.called("search ") != 2 || hs.fb.calledWith("in [orders.dlq]") != 1 {
		t.Fatalf("searched again: %v, want orders.dlq alone", hs.fb.callList())
	}
	s := hs.search()
	if s := hs.screen(); !strings.Contains(s, "2 matches in 1 of 2 parking lot(s)") || strings.Contains(s, "ord-0002") {
		t.Fatalf("the deleted match is still listed:\n%s", s)
	}
	if len(s.matches) != 2 || s.matches[0].Queue != "demo.error.dlq" || s.matches[1].Queue != "demo.error.dlq" {
		t.Fatalf("matches after searching again: %+v", s.matches)
	}
	hs.press("esc")
	hs.untilScreen("parking lot(s) (P)")
	if len(hs.m.stack) != 1 {
		t.Fatalf("%d screens, want the queues alone", len(hs.m.stack))
	}
}

// TestSearchOpenWhileRunningStopsIt: enter on a match while the search
// runs stops it (it could hold the message), then opens the message.
func TestSearchOpenWhileRunningStopsIt(t *testing.T) {
	hs := startOnQueues(t)
	hs.fb.holdSearches(make(chan struct{})) // never opened: the second lot waits
	hs.press("/")
	hs.typeText("gateway")
	hs.press("enter")
	hs.until("the first matches", func() bool { s := hs.search(); return s != nil && len(s.matches) == 2 })
	hs.press("enter")
	hs.until("the message to open", func() bool {
		ms, ok := hs.m.top().(*messageScreen)
		return ok && ms.queue == "demo.error.dlq" && ms.sum.ID == "pay-0004"
	})
	hs.press("esc", "esc")
	hs.until("the results", func() bool { return hs.search() != nil })
	if s := hs.screen(); !strings.Contains(s, "stopped (ctrl+r searches again): 2 matches in 1 of 1 parking lot(s)") {
		t.Fatalf("the stopped search does not say so:\n%s", s)
	}
}

// TestSlashOnTheListIsStillItsFilter: a list opened from a search filters
// with /, and its esc goes back.
func TestSlashOnTheListIsStillItsFilter(t *testing.T) {
	hs := startOnQueues(t)
	hs.searchAndOpenTheMatchsList("pay-0002")
	hs.press("/")
	hs.typeText("gateway")
	if l := hs.messages(); !l.typing || len(l.rows) != 2 {
		t.Fatalf("/ on the list is not its filter: typing %v, %d rows", l.typing, len(l.rows))
	}
	if _, ok := hs.m.top().(*messagesScreen); !ok {
		t.Fatal("/ on the list left it")
	}
}
