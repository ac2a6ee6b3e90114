package ui

import (
	"context"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/muesli/termenv"
)

// harness runs the root model the way bubbletea does — commands in
// goroutines, their messages back through Update — but under the test's
// control, so it can press keys between messages and wait for a state.
type harness struct {
	t     *testing.T
	m     *Model
	fb    *fakeBackend
	msgs  chan tea.Msg
	quit  bool
	edits []string // bodies the fake editor writes, in order
}

// asciiRenderer draws without colour, as NO_COLOR does.
func asciiRenderer() *lipgloss.Renderer {
	r := lipgloss.NewRenderer(io.Discard)
	r.SetColorProfile(termenv.Ascii)
	return r
}

func newHarness(t *testing.T, fb *fakeBackend, queue string, w, h int) *harness {
	t.Helper()
	hs := &harness{t: t, fb: fb, msgs: make(chan tea.Msg, 1024)}
	opts := Options{
		Queue: queue, Renderer: asciiRenderer(), Now: func() time.Time { return testNow },
		Editor: hs.editor, ExportDir: "/tmp/exports", Refresh: -1,
	}
	hs.m = New(context.Background(), fb, opts)
	t.Cleanup(func() {
		if err := hs.m.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	hs.apply(tea.WindowSizeMsg{Width: w, Height: h})
	hs.exec(hs.m.Init())
	return hs
}

// editor is the fake $EDITOR: it writes the next queued body.
func (h *harness) editor(path string, done func(error) tea.Msg) tea.Cmd {
	return func() tea.Msg {
		if len(h.edits) > 0 {
			body := h.edits[0]
			h.edits = h.edits[1:]
			if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
				return done(err)
			}
		}
		return done(nil)
	}
}

func (h *harness) exec(cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	go func() { h.msgs <- cmd() }()
}

func (h *harness) apply(msg tea.Msg) {
	switch msg := msg.(type) {
	case nil:
	case tea.BatchMsg:
		for _, c := range msg {
			h.exec(c)
		}
	case tea.QuitMsg:
		h.quit = true
	default:
		_, cmd := h.m.Update(msg)
		h.exec(cmd)
	}
}

// until processes messages until cond holds, failing after 5s.
func (h *harness) until(what string, cond func() bool) {
	h.t.Helper()
	deadline := time.After(5 * time.Second)
	poll := time.NewTicker(10 * time.Millisecond) // cond may depend on the backend, not only on messages
	defer poll.Stop()
	for !cond() {
		select {
		case msg := <-h.msgs:
			h.apply(msg)
		case <-poll.C:
		case <-deadline:
			h.t.Fatalf("timed out waiting for %s; screen:\n%s", what, h.screen())
		}
	}
}

// untilScreen waits until the screen shows text.
func (h *harness) untilScreen(text string) {
	h.t.Helper()
	h.until("screen to show "+text, func() bool { return strings.Contains(h.screen(), text) })
}

// drain handles what is already queued (results of the last key press)
// without waiting for more.
func (h *harness) drain() {
	for {
		select {
		case msg := <-h.msgs:
			h.apply(msg)
		case <-time.After(50 * time.Millisecond):
			return
		}
	}
}

func (h *harness) press(keys ...string) {
	for _, k := range keys {
		h.apply(keyMsg(k))
	}
}

// typeText sends each rune as a key press.
func (h *harness) typeText(s string) {
	for _, r := range s {
		h.apply(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}})
	}
}

func (h *harness) screen() string { return ansi.Strip(h.m.View()) }

// messages is the messages screen on top of the stack, or nil.
func (h *harness) messages() *messagesScreen {
	for i := len(h.m.stack) - 1; i >= 0; i-- {
		if s, ok := h.m.stack[i].(*messagesScreen); ok {
			return s
		}
	}
	return nil
}

func (h *harness) loaded() bool {
	s := h.messages()
	return s != nil && s.loaded && !s.loading
}

// keyMsg builds the key press bubbletea would deliver for a key name.
func keyMsg(k string) tea.KeyMsg {
	special := map[string]tea.KeyType{
		"enter": tea.KeyEnter, "esc": tea.KeyEsc, "up": tea.KeyUp, "down": tea.KeyDown,
		"pgup": tea.KeyPgUp, "pgdown": tea.KeyPgDown, "home": tea.KeyHome, "end": tea.KeyEnd,
		"tab": tea.KeyTab, "shift+tab": tea.KeyShiftTab, "space": tea.KeySpace, "left": tea.KeyLeft, "right": tea.KeyRight,
		"ctrl+t": tea.KeyCtrlT, "ctrl+a": tea.KeyCtrlA, "ctrl+r": tea.KeyCtrlR, "ctrl+c": tea.KeyCtrlC,
		"backspace": tea.KeyBackspace, "ctrl+u": tea.KeyCtrlU,
	}
	if t, ok := special[k]; ok {
		if t == tea.KeySpace {
			return tea.KeyMsg{Type: t, Runes: []rune{' '}}
		}
		return tea.KeyMsg{Type: t}
	}
	return tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(k)}
}
