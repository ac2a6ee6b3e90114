package ui

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/muesli/termenv"
	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/replay"
	"github.com/parkinglot/parkinglot/retrycore"
)

// Every frame fills the terminal exactly, whatever the size, and redraws
// on resize: the status and help bars never move or wrap.
func TestResize(t *testing.T) {
	hs := startOnLot(t, 120, 40)
	hs.untilScreen("demo.error.dlq: 7 messages")
	check := func(w, h int) {
		t.Helper()
		lines := strings.Split(hs.screen(), "\n")
		if len(lines) != h {
			t.Fatalf("%dx%d: %d lines", w, h, len(lines))
		}
		for i, l := range lines {
			if n := ansi.StringWidth(l); n > w {
				t.Fatalf("%dx%d: line %d is %d wide: %q", w, h, i, n, l)
			}
		}
		if !strings.Contains(lines[h-3], "demo.error.dlq: 7 messages") && w >= 60 {
			t.Fatalf("%dx%d: status bar not third from the bottom:\n%s", w, h, hs.screen())
		}
	}
	for _, sz := range [][2]int{{120, 40}, {80, 24}, {60, 12}, {200, 60}, {80, 24}} {
		hs.apply(tea.WindowSizeMsg{Width: sz[0], Height: sz[1]})
		check(sz[0], sz[1])
		hs.press("g")
		check(sz[0], sz[1])
		hs.press("g", "r")
		hs.untilScreen("origin from")
		check(sz[0], sz[1])
		hs.press("esc")
		hs.until("closed", func() bool { return hs.m.dialog == nil })
	}
	// A tiny terminal must not panic.
	hs.apply(tea.WindowSizeMsg{Width: 10, Height: 3})
	_ = hs.m.View()
	hs.press("enter")
	_ = hs.m.View()
}

type env map[string]string

func (e env) Environ() []string {
	var out []string
	for k, v := range e {
		out = append(out, k+"="+v)
	}
	return out
}
func (e env) Getenv(k string) string { return e[k] }

// NO_COLOR removes every colour; the cursor and the selection stay
// visible by their markers.
func TestNoColor(t *testing.T) {
	view := func(r *lipgloss.Renderer) string {
		fb := newFakeBackend(t.TempDir())
		seedDemo(fb)
		m := New(context.Background(), fb, Options{Queue: "demo.error.dlq", Renderer: r, Now: func() time.Time { return testNow }, Refresh: -1})
		defer m.Close()
		m.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
		s := m.top().(*messagesScreen)
		idx, err := newMsgIndex()
		if err != nil {
			t.Fatal(err)
		}
		s.data.close()
		s.data = idx
		res, _ := fb.Browse(context.Background(), BrowseRequest{Queue: "demo.error.dlq", OnBatch: func(b []replay.Summary) { _ = s.data.add(b) }})
		s.loaded, s.source.src = true, res.Messages
		s.rebuild()
		s.selected.set(1, true) // pay-0002
		return m.View()
	}
	colour := lipgloss.NewRenderer(io.Discard, termenv.WithEnvironment(env{"TERM": "xterm-256color"}), termenv.WithTTY(true), termenv.WithProfile(termenv.TrueColor))
	colour.SetHasDarkBackground(true)
	if v := view(colour); !strings.Contains(v, "\x1b[38;2;") && !strings.Contains(v, "\x1b[38;5;") {
		t.Fatalf("no colour without NO_COLOR:\n%q", v[:200])
	}
	noColour := lipgloss.NewRenderer(io.Discard, termenv.WithEnvironment(env{"TERM": "xterm-256color", "NO_COLOR": "1"}), termenv.WithTTY(true), termenv.WithProfile(termenv.TrueColor))
	v := view(noColour)
	for _, sgr := range []string{"38;5;", "38;2;", "48;5;", "48;2;", "\x1b[31m", "\x1b[32m", "\x1b[33m", "\x1b[34m", "\x1b[35m", "\x1b[36m", "\x1b[90m"} {
		if strings.Contains(v, sgr) {
			t.Fatalf("NO_COLOR output contains colour %q", sgr)
		}
	}
	if strings.Contains(v, "\x1b[") {
		t.Fatalf("NO_COLOR output carries styles: %q", v)
	}
	// lipgloss drops every style under NO_COLOR (reverse video too): the
	// markers are what shows the cursor and the selection.
	if !strings.Contains(v, "▸ pay-0001") || !strings.Contains(v, "●pay-0002") {
		t.Fatalf("without colour the cursor (▸) and the selection (●) must still show:\n%s", v)
	}
}

// Bodies and headers of any shape render without panics, without raw
// control characters, and cut to size.
func TestBadDataRendersSafely(t *testing.T) {
	fb := newFakeBackend(t.TempDir())
	q := "odd.dlq"
	fb.queues = []QueueRow{{QueueInfo: broker.QueueInfo{Name: q}, ParkingLot: true}}
	fb.add(q, "esc\x1b[31mred", "error with \x1b[2J escape\nand a second line", time.Minute, "\x00\x01\x02\xff\xfe binary \x1b[H")
	fb.add(q, "huge", strings.Repeat("e", 5000), time.Hour, `{"k":"`+strings.Repeat("x", 2<<20)+`"}`)
	fb.add(q, "not-json", "x", time.Second, `{"half": `)
	fb.add(q, "c1", "c1 \u009b31m control", time.Second, "{\"s\":\"\u009b2J\"}")
	fb.mu.Lock()
	h := fb.messages[q][0].msg.Headers
	h["odd-int"] = uint16(7)
	h["odd-decimal"] = amqp.Decimal{Scale: 2, Value: 12345}
	h["odd-bytes"] = []byte{0xff, 0x00, 0x1b}
	h["odd-table"] = amqp.Table{"nested": []any{int8(1), nil, amqp.Table{"deep": true}}, "t": time.Unix(0, 0)}
	h["odd-float"] = 3.5
	h["x-death"] = "not an array"
	h[retrycore.HeaderRetryCount] = "three"
	fb.messages[q][0].sum.Facts = retrycore.Decode(h)
	fb.mu.Unlock()

	hs := newHarness(t, fb, q, 80, 24)
	hs.until("loaded", hs.loaded)
	for i := 0; i < 4; i++ {
		hs.press("enter")
		hs.until("message loaded", func() bool { s, ok := hs.m.top().(*messageScreen); return ok && (s.msg != nil || s.loadErr != nil) })
		content := hs.m.top().(*messageScreen).content()
		raw := hs.m.View() + content
		if strings.ContainsAny(ansi.Strip(raw), "\x1b\x00\u009b") {
			t.Fatalf("message %d: raw control characters reach the terminal", i)
		}
		if i == 0 && (!strings.Contains(content, "00000000") || !strings.Contains(content, "odd-decimal")) {
			t.Fatalf("binary body not hex-dumped or headers missing:\n%s", content)
		}
		if i == 1 && !strings.Contains(content, "showing the first") {
			t.Fatalf("huge body not cut:\n%s", content[:500])
		}
		if i == 2 && !strings.Contains(content, "not valid JSON (content_type") {
			t.Fatalf("invalid JSON not explained")
		}
		hs.press("pgdown", "G", "right", "esc")
		hs.until("back", func() bool { _, ok := hs.m.top().(*messagesScreen); return ok })
		hs.press("down")
	}
}

// A browse that fails shows the error in the status line, not a crash, and
// ctrl+r tries again.
func TestBrowseErrorIsShown(t *testing.T) {
	fb := newFakeBackend(t.TempDir())
	seedDemo(fb)
	fb.browseErr = errors.New(`browse: no queue "gone.dlq" in vhost "/"`)
	hs := newHarness(t, fb, "gone.dlq", 100, 30)
	hs.untilScreen(`✗ browse gone.dlq: browse: no queue "gone.dlq" in vhost "/"`)
	if !strings.Contains(hs.screen(), "ctrl+r to try again") {
		t.Fatalf("no way forward shown:\n%s", hs.screen())
	}
	fb.mu.Lock()
	fb.browseErr = nil
	fb.mu.Unlock()
	hs.press("ctrl+r")
	hs.until("retried", func() bool { return hs.fb.called("browse gone.dlq") == 2 })
}

// Quitting while a browse holds messages waits until it has given them
// back.
func TestQuitWaitsForGiveBack(t *testing.T) {
	fb := newFakeBackend(t.TempDir())
	seedDemo(fb)
	fb.holdBrowse = true
	hs := newHarness(t, fb, "demo.error.dlq", 100, 30)
	hs.until("browsing", func() bool { return fb.called("browse") == 1 })
	hs.press("q")
	hs.until("quit", func() bool { return hs.quit })
	if err := hs.m.Close(); err != nil {
		t.Fatal(err)
	}
	fb.mu.Lock()
	defer fb.mu.Unlock()
	if !fb.gaveBack {
		t.Fatal("Close returned before the browse gave its messages back")
	}
}

// A broker-side filter that does not compile says how to fix it, and the
// hint works: / opens the filter with the expression to edit (ctrl+r would
// only run the same expression again).
func TestABadBrokerFilterOffersToEditIt(t *testing.T) {
	hs := startOnLot(t, 120, 30)
	_, bad := replay.CompileFilter("error contains")
	hs.fb.mu.Lock()
	hs.fb.browseErr = bad // what the engine answers such a filter
	hs.fb.mu.Unlock()
	hs.press("/")
	hs.typeText("=error contains")
	hs.press("enter")
	hs.untilScreen("bad filter")
	scr := hs.screen()
	if strings.Contains(scr, "ctrl+r to try again") || !strings.Contains(scr, "/ to edit the filter") {
		t.Fatalf("the hint does not lead to a fix:\n%s", scr)
	}
	hs.fb.mu.Lock()
	hs.fb.browseErr = nil
	hs.fb.mu.Unlock()
	hs.press("/")
	if got := hs.messages().filter.Value(); got != "=error contains" {
		t.Fatalf("/ opens the filter with %q, want the expression to edit", got)
	}
	hs.typeText(` "bank"`)
	hs.press("enter")
	hs.until("the fixed filter's list", func() bool {
		return hs.fb.called(`filter error contains "bank"`) == 1 && hs.loaded()
	})
	if m := hs.messages(); m.expr != `error contains "bank"` || m.loadErr != nil {
		t.Fatalf("expr %q, error %v", m.expr, m.loadErr)
	}
}
