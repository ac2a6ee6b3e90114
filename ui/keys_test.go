package ui

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/charmbracelet/bubbles/key"

	"github.com/parkinglot/parkinglot/broker/store"
	"github.com/parkinglot/parkinglot/replay"
)

// TestEveryKeyIsInTheHelp: every binding of the one keymap is listed by
// the full help (?) of some screen or dialog state, so no key works
// unseen.
func TestEveryKeyIsInTheHelp(t *testing.T) {
	fb := newFakeBackend(t.TempDir())
	c := &common{ctx: context.Background(), backend: fb, styles: NewStyles(asciiRenderer()), keys: DefaultKeyMap(), now: func() time.Time { return testNow }, workers: newWorkers(), width: 100, height: 20}
	helps := []interface{ FullHelp() [][]key.Binding }{
		newQueuesScreen(c), newMessagesScreen(c, "q"), newMessageScreen(c, "q", replay.Summary{ID: "a"}, nil),
		newJobsScreen(c, func() []*dialog { return nil }),
		newSearchScreen(c, "a"),
	}
	ids := store.NewIDSet()
	for _, id := range []string{"a", "b"} {
		if err := ids.Add(id); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { _ = ids.Close() })
	for _, st := range []dialogState{dlgConfirm, dlgPreparing, dlgRunning, dlgDone, dlgCanaryAsk} {
		d := newReplayDialog(c, "q", "2 messages", ids)
		d.state = st
		helps = append(helps, d)
		e := newEditDialog(c, "q", "a")
		e.state, e.act.(*editAction).draft = st, &EditDraft{}
		helps = append(helps, e)
	}
	shown := map[string]bool{}
	for _, h := range helps {
		for _, group := range h.FullHelp() {
			for _, b := range group {
				shown[b.Help().Key] = true
			}
		}
	}
	km := reflect.ValueOf(*c.keys)
	for i := range km.NumField() {
		b := km.Field(i).Interface().(key.Binding)
		if !shown[b.Help().Key] {
			t.Errorf("%s (%s) is in no help", km.Type().Field(i).Name, b.Help().Key)
		}
	}
}

// TestABadFilterErrorClearsOnTheNextAction: the red line of a bad broker
// filter does not outlive the next thing done (esc, g, opening a group).
func TestABadFilterErrorClearsOnTheNextAction(t *testing.T) {
	for _, next := range [][]string{{"esc"}, {"g"}, {"g", "enter"}} {
		hs := startOnLot(t, 100, 30)
		_, bad := replay.CompileFilter("error contains")
		hs.fb.mu.Lock()
		hs.fb.browseErr = bad // what the engine answers such a filter
		hs.fb.mu.Unlock()
		hs.press("/")
		hs.typeText("=error contains")
		hs.press("enter")
		hs.until("the bad filter's error", func() bool { return hs.m.kind == statusError })
		hs.fb.mu.Lock()
		hs.fb.browseErr = nil
		hs.fb.mu.Unlock()
		hs.press(next...)
		if hs.m.kind == statusError {
			t.Errorf("after %v the error line is still there: %q", next, hs.m.status)
		}
	}
}
