package ui

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestImportPublishesAFileBackIntoTheParkingLot: i on a parking lot's list
// offers the file this session exported last; enter imports the file typed
// into that parking lot, and the list reloads with the messages.
func TestImportPublishesAFileBackIntoTheParkingLot(t *testing.T) {
	hs := startOnLot(t, 120, 30)
	hs.press("x")
	hs.untilScreen("Export 7 message(s)")
	hs.press("enter")
	exported := "/tmp/exports/demo.error.dlq-20250314-092653.jsonl"
	hs.untilScreen("✓ exported 7 to " + exported)
	hs.until("the export closed, the list loaded", func() bool { return hs.m.dialog == nil && hs.loaded() })

	hs.press("i")
	hs.untilScreen("Import an export file")
	if s := hs.screen(); !strings.Contains(s, exported) || !strings.Contains(s, "published to demo.error.dlq") {
		t.Fatalf("the dialog does not offer the last export, or say where it goes:\n%s", s)
	}
	file := filepath.Join(t.TempDir(), "fixed.jsonl")
	if err := os.WriteFile(file, []byte("{}\n{}\n{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	hs.press("ctrl+u") // clear the field
	hs.typeText(file)
	hs.press("enter")
	hs.until("imported", func() bool { return hs.m.dialog == nil })
	hs.untilScreen("✓ imported 3")
	if hs.fb.called("import demo.error.dlq "+file) != 1 {
		t.Fatalf("calls: %v", hs.fb.callList())
	}
	hs.until("the list reloaded", func() bool { return hs.loaded() && hs.messages().data.len() == 10 })
}

// TestImportRunsAsAJob: a running import goes to the background with b,
// like every action, and its parking lot is refused to a second action.
func TestImportRunsAsAJob(t *testing.T) {
	hs := startOnLot(t, 120, 30)
	file := filepath.Join(t.TempDir(), "fixed.jsonl")
	if err := os.WriteFile(file, []byte("{}\n{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	hs.fb.gate = make(chan struct{})
	hs.press("i")
	hs.untilScreen("Import an export file")
	hs.press("ctrl+u")
	hs.typeText(file)
	hs.press("enter")
	hs.untilScreen("0/1") // running; the file's count comes with the first message
	hs.fb.gate <- struct{}{}
	hs.untilScreen("1/2")
	hs.press("b")
	hs.until("the job in the background", func() bool { return hs.m.dialog == nil && len(hs.m.jobs) == 1 })
	hs.untilScreen("job: import 1/2")
	hs.press("d")
	hs.untilScreen("a import job is acting on demo.error.dlq")
	hs.fb.gate <- struct{}{}
	hs.untilScreen("job on demo.error.dlq: imported 2")
	if n := len(hs.fb.ids("demo.error.dlq")); n != 9 {
		t.Fatalf("%d messages, want 7 + 2 imported", n)
	}
}

// TestSearchResultsSeeAnImport: back on the results after an import into
// a parking lot, that parking lot is searched again and its new messages
// are listed.
func TestSearchResultsSeeAnImport(t *testing.T) {
	hs := startOnQueues(t)
	hs.searchAndOpenTheMatchsList("ord-0001")
	file := filepath.Join(t.TempDir(), "fixed.jsonl")
	if err := os.WriteFile(file, []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	hs.fb.importID = "ord-0001-again"
	hs.press("i")
	hs.untilScreen("Import an export file")
	hs.press("ctrl+u")
	hs.typeText(file)
	hs.press("enter")
	hs.until("imported", func() bool { return hs.m.dialog == nil && hs.loaded() })
	hs.press("esc")
	hs.until("the results searched again", func() bool { return hs.search() != nil && hs.searchDone() && hs.fb.calledWith("in [orders.dlq]") == 1 })
	if s := hs.screen(); !strings.Contains(s, "ord-0001-again") || !strings.Contains(s, "2 matches") {
		t.Fatalf("the imported message is not among the results:\n%s", s)
	}
}

// TestSearchResultsInViewSeeAJobEnd: an import sent to the background
// that ends while the search results are on top gets its parking lot
// searched again then, not only when something is next opened and closed.
func TestSearchResultsInViewSeeAJobEnd(t *testing.T) {
	hs := startOnQueues(t)
	hs.searchAndOpenTheMatchsList("ord-0001")
	hs.importTwoAsAJob("ord-0001-again")
	hs.press("esc")
	hs.until("the results on top", hs.searchDone)
	if n := hs.fb.calledWith("in [orders.dlq]"); n != 0 {
		t.Fatalf("searched again %d time(s) before the import ended", n)
	}
	hs.fb.gate <- struct{}{}
	hs.until("the results searched again", func() bool { return hs.searchDone() && hs.fb.calledWith("in [orders.dlq]") == 1 })
	if s := hs.screen(); !strings.Contains(s, "ord-0001-again") || !strings.Contains(s, "3 matches") {
		t.Fatalf("the imported messages are not among the results:\n%s", s)
	}
}

// TestSearchSkippingAJobsLotSearchesItOnceTheJobEnds: a search leaves out
// a parking lot a job acts on; a job that ends while the search runs has
// that lot searched once the search ends.
func TestSearchSkippingAJobsLotSearchesItOnceTheJobEnds(t *testing.T) {
	hs := startOnQueues(t)
	hs.press("enter")
	hs.until("demo.error.dlq's list", func() bool {
		return hs.messages() != nil && hs.messages().queue == "demo.error.dlq" && hs.loaded()
	})
	hs.importTwoAsAJob("ord-0001-again")
	hs.press("esc")
	hs.until("the queues", func() bool { _, ok := hs.m.top().(*queuesScreen); return ok })

	searchGate := hs.fb.holdSearches(make(chan struct{}))
	hs.press("/")
	hs.typeText("ord-0001")
	hs.press("enter")
	hs.until("the search running", func() bool { s := hs.search(); return s != nil && s.running })
	if s := hs.search(); !slices.Equal(s.run.skip, []string{"demo.error.dlq"}) {
		t.Fatalf("the search skips %v, want the import's lot", s.run.skip)
	}
	hs.fb.gate <- struct{}{} // the import ends under the running search
	hs.until("the job done", func() bool { return strings.Contains(hs.screen(), "job on demo.error.dlq: imported 2") })
	close(searchGate)
	hs.until("demo.error.dlq searched again", func() bool {
		return hs.searchDone() && hs.fb.calledWith("in [demo.error.dlq]") == 1
	})
	for _, qs := range hs.search().res.Queues {
		if qs.Err != nil {
			t.Errorf("%s: %v", qs.Queue, qs.Err)
		}
	}
	if s := hs.screen(); !strings.Contains(s, "ord-0001-again") || !strings.Contains(s, "3 matches") {
		t.Fatalf("the imported messages are not among the results:\n%s", s)
	}
}

// searchAndOpenTheMatchsList searches from the queues screen for text,
// opens the first match and goes back from the message to its list.
func (h *harness) searchAndOpenTheMatchsList(text string) {
	h.t.Helper()
	h.press("/")
	h.typeText(text)
	h.press("enter")
	h.until("the search to end", h.searchDone)
	h.press("enter")
	h.until("the message to open", func() bool { _, ok := h.m.top().(*messageScreen); return ok })
	h.press("esc")
	h.until("its list", func() bool { return h.messages() != nil && h.m.top() == h.messages() && h.loaded() })
}

// importTwoAsAJob imports a file of two messages (ids id-1, id-2) into
// the open list's parking lot and sends the import to the background
// after the first; the second waits for h.fb.gate.
func (h *harness) importTwoAsAJob(id string) {
	h.t.Helper()
	file := filepath.Join(h.t.TempDir(), "fixed.jsonl")
	if err := os.WriteFile(file, []byte("{}\n{}\n"), 0o600); err != nil {
		h.t.Fatal(err)
	}
	h.fb.importID = id
	h.fb.gate = make(chan struct{})
	h.press("i")
	h.untilScreen("Import an export file")
	h.press("ctrl+u")
	h.typeText(file)
	h.press("enter")
	h.untilScreen("0/1")
	h.fb.gate <- struct{}{}
	h.untilScreen("1/2")
	h.press("b")
	h.until("the job in the background", func() bool { return h.m.dialog == nil && len(h.m.jobs) == 1 })
}
