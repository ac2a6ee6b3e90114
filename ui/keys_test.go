package ui

import (
	"context"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

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
		d := newReplayDialog(c, "q", "2 messages", ids, 2)
		d.state = st
		helps = append(helps, d)
		e := newEditDialog(c, "q", "a")
		e.state, e.act.(*editAction).draft = st, &EditDraft{}
		helps = append(helps, e)
	}
	var shown []key.Binding
	for _, h := range helps {
		for _, group := range h.FullHelp() {
			shown = append(shown, group...)
		}
	}
	// Each key a binding answers is named by a help that lists it: a key
	// left out of the label (ctrl+d beside pgdn) works unseen.
	km := reflect.ValueOf(*c.keys)
	for i := range km.NumField() {
		name := km.Type().Field(i).Name
		b := km.Field(i).Interface().(key.Binding)
		listed := false
		for _, s := range shown {
			if !slices.Equal(s.Keys(), b.Keys()) {
				continue
			}
			listed = true
			for _, k := range b.Keys() {
				if !slices.Contains(helpKeyNames(s.Help().Key), keyHelpName(k)) {
					t.Errorf("%s answers %q, which its help %q does not name", name, k, s.Help().Key)
				}
			}
		}
		if !listed {
			t.Errorf("%s (%s) is in no help", name, b.Help().Key)
		}
	}
}

// helpKeyNames splits a help label ("pgup/ctrl+b") into the keys it names.
func helpKeyNames(label string) []string {
	if label == "/" {
		return []string{"/"}
	}
	return strings.Split(label, "/")
}

// keyHelpName is how a help label writes a key.
func keyHelpName(k string) string {
	if n, ok := map[string]string{" ": "space", "pgdown": "pgdn", "f5": "F5", "up": "↑", "down": "↓", "left": "←", "right": "→"}[k]; ok {
		return n
	}
	return k
}

// TestFullHelpShowsEveryKey: ? lists every key of the screen under it,
// each with what it does, uncut, at the sizes a terminal has; what does
// not fit the height scrolls (pgdn).
func TestFullHelpShowsEveryKey(t *testing.T) {
	screens := []struct {
		name, queue string
		keys        []string // from the start, to reach the screen
		ready       string
	}{
		{name: "queues", ready: "1 parking lot(s)"},
		{name: "messages", queue: "demo.error.dlq", ready: "all given back"},
		{name: "message", queue: "demo.error.dlq", ready: "all given back", keys: []string{"enter"}},
		{name: "search", ready: "1 parking lot(s)", keys: []string{"/", "amount", "enter"}},
		{name: "jobs", ready: "1 parking lot(s)", keys: []string{"J"}},
	}
	for _, size := range [][2]int{{80, 24}, {120, 40}, {60, 16}} {
		for _, sc := range screens {
			t.Run(fmt.Sprintf("%s_%dx%d", sc.name, size[0], size[1]), func(t *testing.T) {
				fb := newFakeBackend(t.TempDir())
				seedDemo(fb)
				hs := newHarness(t, fb, sc.queue, size[0], size[1])
				hs.untilScreen(sc.ready)
				for _, k := range sc.keys {
					if len(k) > 1 && keyMsg(k).Type == tea.KeyRunes {
						hs.typeText(k)
					} else {
						hs.press(k)
					}
				}
				hs.drain()
				top := hs.m.top()
				hs.press("?")
				// Every page of the help, down to its end.
				seen := hs.screen()
				for range 20 {
					hs.press("pgdown")
					seen += hs.screen()
				}
				if !strings.Contains(seen, "Browsing holds messages") {
					t.Fatalf("the help's end never shows:\n%s", seen)
				}
				for _, group := range top.FullHelp() {
					for _, b := range group {
						h := b.Help()
						line := regexp.MustCompile(`(?m)` + regexp.QuoteMeta(h.Key) + ` +` + regexp.QuoteMeta(h.Desc) + `( |$)`)
						if !line.MatchString(seen) {
							t.Errorf("%s: %q %q is not shown whole:\n%s", sc.name, h.Key, h.Desc, hs.screen())
						}
					}
				}
				hs.press("?")
				if hs.m.fullHelp {
					t.Fatal("? did not close the help")
				}
			})
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
