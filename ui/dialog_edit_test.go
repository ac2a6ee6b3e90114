package ui

import (
	"errors"
	"os"
	"strings"
	"testing"
	"time"
)

// holdEditReady processes messages until the draft of an edit arrives, and
// returns it unapplied, so the test decides when the model hears of it.
func (h *harness) holdEditReady() editReadyMsg {
	h.t.Helper()
	deadline := time.After(5 * time.Second)
	for {
		select {
		case msg := <-h.msgs:
			if r, ok := msg.(editReadyMsg); ok {
				return r
			}
			h.apply(msg)
		case <-deadline:
			h.t.Fatalf("timed out waiting for the edit's draft; screen:\n%s", h.screen())
		}
	}
}

// TestEditCancelledWhilePreparingDiscardsTheLateDraft: esc while the body
// is fetched closes the dialog; the draft that arrives afterwards is
// removed, whether the dialog is already gone or still closing.
func TestEditCancelledWhilePreparingDiscardsTheLateDraft(t *testing.T) {
	for _, gone := range []bool{true, false} {
		hs := startOnLot(t, 100, 30)
		hs.press("e")
		ready := hs.holdEditReady()
		if ready.err != nil || ready.draft == nil {
			t.Fatalf("prepare: %v", ready.err)
		}
		hs.untilScreen("Opening the body in $EDITOR")
		hs.press("esc")
		if gone {
			hs.until("closed", func() bool { return hs.m.dialog == nil })
		}
		hs.apply(ready)
		hs.drain()
		hs.until("closed", func() bool { return hs.m.dialog == nil })
		if hs.fb.called("discard-edit pay-0001") != 1 || hs.fb.called("finish-edit") != 0 {
			t.Fatalf("dialog gone=%v: calls %v", gone, hs.fb.calls)
		}
		if _, err := os.Stat(ready.draft.Path); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("dialog gone=%v: the draft file is still there (%v)", gone, err)
		}
		if !strings.Contains(hs.screen(), "edit cancelled — nothing changed") {
			t.Fatalf("dialog gone=%v: status missing:\n%s", gone, hs.screen())
		}
	}
}

// TestEnterDoesNotDiscardAKeptEdit: after an invalid edit the help offers
// e and esc; enter keeps the dialog and the draft, esc throws it away.
func TestEnterDoesNotDiscardAKeptEdit(t *testing.T) {
	hs := startOnLot(t, 100, 30)
	hs.edits = []string{`{"id":"pay-0001","amount":`}
	hs.press("e")
	hs.untilScreen("reaches demo.main.queue")
	hs.press("enter")
	hs.until("the failure in the status line", func() bool { return strings.Contains(hs.m.status, "edit not sent") })
	hs.untilScreen("e edit again")
	hs.press("enter")
	hs.drain()
	if hs.m.dialog == nil || hs.fb.called("discard-edit") != 0 {
		t.Fatalf("enter discarded the kept edit: calls %v\n%s", hs.fb.calls, hs.screen())
	}
	if help := hs.screen(); !strings.Contains(help, "e edit again") || !strings.Contains(help, "esc discard") || strings.Contains(help, "enter") {
		t.Fatalf("help does not match what the keys do:\n%s", help)
	}
	hs.press("esc")
	hs.until("closed", func() bool { return hs.m.dialog == nil })
	if hs.fb.called("discard-edit pay-0001") != 1 {
		t.Fatalf("esc did not discard: %v", hs.fb.calls)
	}
}
