package ui

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/parkinglot/parkinglot/replay"
	"github.com/parkinglot/parkinglot/retrycore"
)

func TestReplayOneShowsPlanAndReplays(t *testing.T) {
	hs := startOnLot(t, 100, 30)
	hs.press("r")
	hs.untilScreen("→ demo.main / payment.execute → reaches demo.main.queue")
	scr := hs.screen()
	for _, want := range []string{"Replay 1 message(s)", "message pay-0001 in demo.error.dlq", "origin from x-original-exchange", "Destination", "enter confirm"} {
		if !strings.Contains(scr, want) {
			t.Errorf("dialog lacks %q:\n%s", want, scr)
		}
	}
	hs.press("enter")
	hs.until("dialog closed", func() bool { return hs.m.dialog == nil })
	hs.untilScreen("✓ replayed 1")
	hs.until("reloaded", func() bool { return hs.loaded() && hs.messages().data.len() == 6 })
	if ids := hs.fb.ids("demo.error.dlq"); len(ids) != 6 || ids[0] != "pay-0002" {
		t.Fatalf("left in the lot: %v", ids)
	}
	if hs.fb.called("browse demo.error.dlq") != 2 {
		t.Fatalf("the list did not reload: %v", hs.fb.calls)
	}
}

func TestReplayTypedDestinationReplans(t *testing.T) {
	hs := startOnLot(t, 100, 30)
	hs.press("r")
	hs.untilScreen("reaches demo.main.queue")
	hs.typeText("other.exchange:orders.retry")
	hs.press("enter") // first enter previews the typed destination
	hs.untilScreen("other.exchange / orders.retry")
	if hs.fb.called("plan demo.error.dlq 1 to=other.exchange / orders.retry") != 1 {
		t.Fatalf("no plan for the typed destination: %v", hs.fb.calls)
	}
	if !strings.Contains(hs.screen(), "reaches NO queue") {
		t.Fatalf("unroutable warning missing:\n%s", hs.screen())
	}
	if hs.fb.called("replay") != 0 {
		t.Fatal("replayed before the typed destination was previewed")
	}
	hs.press("enter")
	hs.until("replayed", func() bool { return hs.fb.called("replay") == 1 })
	hs.until("dialog closed", func() bool { return hs.m.dialog == nil })
	if to := hs.fb.lastReq.To; to == nil || *to != (retrycore.Destination{Exchange: "other.exchange", RoutingKey: "orders.retry"}) {
		t.Fatalf("replay went to %v", to)
	}
}

func TestReplayBadDestinationIsRefused(t *testing.T) {
	hs := startOnLot(t, 100, 30)
	hs.press("r")
	hs.untilScreen("reaches demo.main.queue")
	hs.typeText("no-colon")
	hs.press("enter")
	hs.press("enter")
	hs.untilScreen("want EXCHANGE:ROUTING_KEY")
	if hs.fb.called("replay") != 0 {
		t.Fatal("replayed with a bad destination")
	}
}

func TestReplayTargetFailedQueue(t *testing.T) {
	fb := newFakeBackend(t.TempDir())
	seedDemo(fb)
	fb.plan = &Plan{Messages: 1, Routes: []PlannedRoute{{
		Destination: retrycore.Destination{Exchange: "demo.main", RoutingKey: "payment.execute"}, Source: "x-original-exchange",
		Messages: 1, Queues: []string{"audit.queue", "demo.main.queue"}, Known: true, FailedQueues: []string{"demo.main.queue"},
	}}}
	hs := newHarness(t, fb, "demo.error.dlq", 120, 30)
	hs.until("loaded", hs.loaded)
	hs.press("r")
	hs.untilScreen("also reaches audit.queue")
	fb.mu.Lock()
	fb.plan = nil
	fb.mu.Unlock()
	hs.press("ctrl+t")
	hs.untilScreen("(default exchange) / demo.main.queue")
	hs.press("enter")
	hs.until("replayed", func() bool { return hs.fb.called("replay") == 1 })
	if hs.fb.lastReq.Target != replay.TargetQueue {
		t.Fatalf("target %q", hs.fb.lastReq.Target)
	}
}

func TestBulkReplayProgressAndCancel(t *testing.T) {
	fb := newFakeBackend(t.TempDir())
	seedDemo(fb)
	fb.gate = make(chan struct{})
	hs := newHarness(t, fb, "demo.error.dlq", 100, 30)
	hs.until("loaded", hs.loaded)
	hs.press("R")
	hs.untilScreen("all 7 message(s) shown")
	hs.untilScreen("7 × → demo.main")
	hs.press("enter")
	hs.untilScreen("0/7")
	fb.gate <- struct{}{}
	fb.gate <- struct{}{}
	hs.untilScreen("2/7")
	hs.press("esc") // cancel
	hs.untilScreen("cancelled: replayed 2")
	if d := hs.m.dialog; d == nil || d.state != dlgDone {
		t.Fatal("a cancelled run should stay open with its outcome")
	}
	hs.press("enter")
	hs.until("closed and reloaded", func() bool { return hs.m.dialog == nil && hs.loaded() && hs.messages().data.len() == 5 })
	hs.untilScreen("⚠ cancelled: replayed 2")
}

func TestReplayFailuresAreReported(t *testing.T) {
	fb := newFakeBackend(t.TempDir())
	seedDemo(fb)
	fb.failIDs["pay-0004"] = "unroutable: no queue is bound for that exchange and routing key"
	hs := newHarness(t, fb, "demo.error.dlq", 100, 30)
	hs.until("loaded", hs.loaded)
	hs.press("R")
	hs.untilScreen("7 × →")
	hs.press("enter")
	hs.untilScreen("replayed 6, 1 failed: unroutable")
	if !strings.Contains(hs.screen(), "pay-0004: unroutable") {
		t.Fatalf("failure list missing:\n%s", hs.screen())
	}
	hs.press("esc")
	hs.until("reloaded", func() bool { return hs.m.dialog == nil && hs.loaded() && hs.messages().data.len() == 1 })
}

func TestEditWithFailingValidation(t *testing.T) {
	hs := startOnLot(t, 100, 30)
	hs.edits = []string{`{"id":"pay-0001","amount":`, `{"id":"pay-0001","amount":10}`}
	hs.press("e")
	hs.untilScreen("Edit and replay")
	hs.untilScreen("reaches demo.main.queue") // the editor closed, the plan is shown
	hs.press("enter")
	// The status line's text comes from a command of its own: wait for it,
	// or it may land after the next edit's.
	hs.until("the failure in the status line", func() bool { return strings.Contains(hs.m.status, "edit not sent") })
	scr := hs.screen()
	if !strings.Contains(scr, "not valid JSON") || !strings.Contains(scr, "e opens it again") {
		t.Fatalf("validation failure not shown:\n%s", scr)
	}
	if ids := hs.fb.ids("demo.error.dlq"); len(ids) != 7 {
		t.Fatalf("an invalid edit sent something: %v", ids)
	}
	hs.press("e") // edit again: the fake editor now writes valid JSON
	hs.untilScreen("reaches demo.main.queue")
	hs.press("enter")
	hs.until("sent", func() bool { return hs.m.dialog == nil })
	hs.untilScreen("replayed (edited) 1")
	if hs.fb.called("finish-edit pay-0001") != 2 || hs.fb.called("discard-edit") != 0 {
		t.Fatalf("calls: %v", hs.fb.calls)
	}
	if ids := hs.fb.ids("demo.error.dlq"); len(ids) != 6 {
		t.Fatalf("edited message still parked: %v", ids)
	}
}

func TestEditCancelDiscardsDraft(t *testing.T) {
	hs := startOnLot(t, 100, 30)
	hs.press("e")
	hs.untilScreen("enter confirm")
	hs.press("esc")
	hs.until("closed", func() bool { return hs.m.dialog == nil })
	hs.untilScreen("cancelled — nothing changed")
	if hs.fb.called("discard-edit pay-0001") != 1 || hs.fb.called("finish-edit") != 0 {
		t.Fatalf("calls: %v", hs.fb.calls)
	}
}

func TestDelete(t *testing.T) {
	hs := startOnLot(t, 100, 30)
	hs.press("down", "d")
	hs.untilScreen("Delete 1 message(s)")
	if !strings.Contains(hs.screen(), "removed from the parking lot for good") {
		t.Fatalf("delete dialog:\n%s", hs.screen())
	}
	hs.press("enter")
	hs.until("deleted", func() bool { return hs.m.dialog == nil })
	hs.untilScreen("✓ deleted 1")
	if ids := hs.fb.ids("demo.error.dlq"); len(ids) != 6 || contains(ids, "pay-0002") {
		t.Fatalf("left: %v", ids)
	}
}

func TestExport(t *testing.T) {
	hs := startOnLot(t, 120, 30)
	hs.press("/")
	hs.typeText("gateway")
	hs.press("enter", "x")
	hs.untilScreen("Export 2 message(s)")
	want := "/tmp/exports/demo.error.dlq-20250314-092653.jsonl"
	if !strings.Contains(hs.screen(), want) {
		t.Fatalf("default path missing:\n%s", hs.screen())
	}
	hs.press("enter")
	hs.until("exported", func() bool { return hs.m.dialog == nil })
	hs.untilScreen("✓ exported 2 to " + want)
	if hs.fb.called("export demo.error.dlq 2 "+want) != 1 {
		t.Fatalf("calls: %v", hs.fb.calls)
	}
	if ids := hs.fb.ids("demo.error.dlq"); len(ids) != 7 {
		t.Fatalf("export removed messages: %v", ids)
	}
}

// Without an export folder configured, x writes into the working
// directory, and says so by its absolute path: in the field, in the
// result, and to the backend; a relative name typed is resolved the same
// way, and import offers the same folder.
func TestExportShowsTheAbsolutePath(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	hs := startOnLot(t, 120, 30)
	hs.m.c.exportDir = "" // the working directory, as `parkinglot tui` runs
	hs.press("x")
	hs.untilScreen("Export 7 message(s)")
	want := filepath.Join(dir, "demo.error.dlq-20250314-092653.jsonl")
	d := hs.m.dialog
	if got := d.act.(*exportAction).path.Value(); got != want {
		t.Fatalf("the field offers %q, want %q", got, want)
	}
	hs.press("enter")
	hs.until("exported", func() bool { return hs.m.dialog == nil })
	// The dialog closes before the job's result arrives: wait for that.
	hs.until("the result naming the absolute path "+want, func() bool { return hs.m.status == "exported 7 to "+want })
	if hs.fb.called("export demo.error.dlq 7 "+want) != 1 {
		t.Fatalf("calls: %v", hs.fb.callList())
	}

	// Each export ends with a reload of the list (a browse): wait for it.
	reloaded := func(browses int) func() bool {
		return func() bool {
			return hs.m.dialog == nil && hs.fb.called("browse demo.error.dlq") >= browses && hs.loaded()
		}
	}
	hs.until("the list again", reloaded(2))
	hs.press("x")
	hs.untilScreen("Export 7 message(s)")
	hs.press("ctrl+u")
	hs.typeText("copy.jsonl")
	hs.press("enter")
	copyPath := filepath.Join(dir, "copy.jsonl")
	hs.until("exported", func() bool { return hs.m.dialog == nil })
	hs.until("a relative name exported to "+copyPath, func() bool { return hs.fb.called("export demo.error.dlq 7 "+copyPath) == 1 })

	hs.until("the list again", reloaded(3))
	hs.m.c.lastExport = ""
	hs.press("i")
	hs.untilScreen("Import an export file")
	if got := hs.m.dialog.act.(*importAction).path.Value(); got != dir+string(filepath.Separator) {
		t.Fatalf("import offers %q, want the folder %s", got, dir)
	}
}

func TestActionFromMessageScreenGoesBack(t *testing.T) {
	hs := startOnLot(t, 100, 30)
	hs.press("enter")
	hs.until("the body", func() bool { return strings.Contains(hs.fullContent(), "Body") })
	hs.press("r")
	hs.untilScreen("reaches demo.main.queue")
	hs.press("enter")
	hs.until("back on the list", func() bool {
		_, onList := hs.m.top().(*messagesScreen)
		return onList && hs.m.dialog == nil && hs.loaded() && hs.messages().data.len() == 6
	})
}

// A message parked twice has two rows with one id, and acting on an id
// acts on every message that carries it (replay's "Identity"): a dialog
// counts those messages, says so when some are outside the rows chosen,
// and acts on exactly that many.
func TestDialogsCountEveryCopyOfAChosenID(t *testing.T) {
	for _, c := range []struct {
		name, verb string
		keys       []string // from the list, in queue order
		title      string
		note       bool // copies outside the rows chosen are told
		left       int  // of the 8 messages
	}{
		{name: "group", verb: "replayed", keys: []string{"g", "R"}, title: "Replay 4 message(s)", left: 4}, // 4 rows, 3 ids
		{name: "row", verb: "replayed", keys: []string{"down", "r"}, title: "Replay 2 message(s)", note: true, left: 6},
		{name: "delete", verb: "deleted", keys: []string{"down", "d"}, title: "Delete 2 message(s)", note: true, left: 6},
		{name: "export", verb: "exported", keys: []string{"down", "space", "x"}, title: "Export 2 message(s)", note: true, left: 8},
	} {
		t.Run(c.name, func(t *testing.T) {
			fb := newFakeBackend(t.TempDir())
			seedDemo(fb)
			fb.add("demo.error.dlq", "pay-0002", "amount must be positive, got -250 (payment pay-0002)", time.Minute, `{}`)
			hs := newHarness(t, fb, "demo.error.dlq", 100, 30)
			hs.until("loaded", hs.loaded)
			hs.press(c.keys...)
			hs.untilScreen(c.title)
			if c.name == "group" && !strings.Contains(hs.screen(), "(4 messages)") {
				t.Fatalf("the group's rows and the title disagree:\n%s", hs.screen())
			}
			if got := strings.Contains(hs.screen(), "1 more message(s) carry the id of a chosen one"); got != c.note {
				t.Fatalf("copies told: %v, want %v:\n%s", got, c.note, hs.screen())
			}
			if c.name == "group" || c.name == "row" {
				hs.untilScreen("reaches demo.main.queue")
			}
			hs.press("enter")
			hs.until("done", func() bool { return hs.m.dialog == nil })
			hs.untilScreen("✓ " + c.verb + " " + strings.Fields(c.title)[1])
			if ids := fb.ids("demo.error.dlq"); len(ids) != c.left {
				t.Fatalf("left in the lot: %v, want %d messages", ids, c.left)
			}
		})
	}
}

// The count a dialog shows binds the action (ActionRequest.Limit, as the
// CLI binds a confirmed plan): a copy parked after the dialog opened is
// not taken with the ones counted.
func TestADialogActsOnWhatItCounted(t *testing.T) {
	fb := newFakeBackend(t.TempDir())
	seedDemo(fb)
	fb.add("demo.error.dlq", "pay-0002", "amount must be positive, got -250 (payment pay-0002)", time.Minute, `{}`)
	hs := newHarness(t, fb, "demo.error.dlq", 100, 30)
	hs.until("loaded", hs.loaded)
	hs.press("down", "r")
	hs.untilScreen("Replay 2 message(s)")
	hs.untilScreen("reaches demo.main.queue")
	fb.add("demo.error.dlq", "pay-0002", "amount must be positive, got -250 (payment pay-0002)", 0, `{}`) // parked since
	hs.press("enter")
	hs.until("done", func() bool { return hs.m.dialog == nil })
	hs.untilScreen("✓ replayed 2")
	if fb.lastReq.Limit != 2 {
		t.Fatalf("the request's limit is %d, want the 2 counted", fb.lastReq.Limit)
	}
	if got := fmt.Sprint(fb.ids("demo.error.dlq")); !strings.Contains(got, "pay-0002") || len(fb.ids("demo.error.dlq")) != 7 {
		t.Fatalf("left in the lot: %s; want the copy parked since, and the 6 others", got)
	}
}

// An action stops a running browse (its held messages would be invisible
// to the action's own pass); closing the dialog loads the list again.
func TestActionPausesLoading(t *testing.T) {
	fb := newFakeBackend(t.TempDir())
	seedDemo(fb)
	fb.holdBrowse = true
	hs := newHarness(t, fb, "demo.error.dlq", 100, 30)
	hs.until("browsing", func() bool { return fb.called("browse") == 1 })
	// Nothing is listed yet, so act on the whole (empty) list: R refuses.
	hs.press("R")
	hs.untilScreen("nothing to act on here")
	fb.mu.Lock()
	fb.holdBrowse = false
	fb.mu.Unlock()
	hs.press("ctrl+r")
	hs.until("loaded", hs.loaded)
	fb.mu.Lock()
	fb.holdBrowse = true
	fb.mu.Unlock()
	hs.press("ctrl+r") // a reload in progress…
	hs.until("reloading", func() bool { return fb.called("browse") == 3 })
	hs.press("r") // …is stopped by the dialog
	hs.untilScreen("Replay 1 message(s)")
	if m := hs.messages(); m.loading || !m.stopped {
		t.Fatalf("loading=%v stopped=%v", m.loading, m.stopped)
	}
	fb.mu.Lock()
	fb.holdBrowse = false
	fb.mu.Unlock()
	hs.press("esc")
	hs.until("reloaded after the dialog", func() bool { return fb.called("browse") == 4 && hs.loaded() })
}

// A selection made on a first browse that an action interrupted is found
// again, by id, when the list is streamed in afresh after the dialog.
func TestSelectionSurvivesAnInterruptedFirstBrowse(t *testing.T) {
	fb := newFakeBackend(t.TempDir())
	seedDemo(fb)
	fb.holdBrowse, fb.holdAfter = true, 4
	hs := newHarness(t, fb, "demo.error.dlq", 100, 30)
	hs.until("the first rows", func() bool { m := hs.messages(); return m.data.len() == 4 })
	hs.press("down", "space", "space") // pay-0002 and pay-0003
	m := hs.messages()
	if got := selectedIDs(t, m); fmt.Sprint(got) != "[pay-0002 pay-0003]" {
		t.Fatalf("selected %v", got)
	}
	hs.press("R") // stops the browse
	hs.untilScreen("2 selected message(s)")
	fb.mu.Lock()
	fb.holdBrowse = false
	fb.messages["demo.error.dlq"] = fb.messages["demo.error.dlq"][1:] // meanwhile pay-0001 left: positions shift
	fb.mu.Unlock()
	hs.press("esc")
	hs.until("reloaded", hs.loaded)
	if got := selectedIDs(t, m); fmt.Sprint(got) != "[pay-0002 pay-0003]" {
		t.Fatalf("after the reload, selected %v", got)
	}
}
