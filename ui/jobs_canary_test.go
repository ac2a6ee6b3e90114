package ui

import (
	"context"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/parkinglot/parkinglot/replay"
)

// canaryFake is the fake backend with a one-step canary: the first
// req.Canary[0] messages go, none comes back, and Proceed decides whether
// the rest follow.
type canaryFake struct{ *fakeBackend }

func (f canaryFake) Replay(ctx context.Context, req ActionRequest) (replay.Result, error) {
	if len(req.Canary) == 0 {
		return f.fakeBackend.Replay(ctx, req)
	}
	ids := f.chosen(req)
	n := min(req.Canary[0], len(ids))
	first := req
	first.Select = replay.Selector{IDs: ids[:n]}
	res, err := f.remove(ctx, replay.EventReplayed, first, false)
	if err != nil {
		return res, err
	}
	st := replay.CanaryStep{Step: 1, Replayed: res.Done, Watched: res.Done}
	req.OnCanary(CanaryUpdate{Step: st, Ended: true})
	if !req.Proceed(ctx, st) {
		return res, replay.ErrCanaryStopped
	}
	rest := req
	rest.Select = replay.Selector{IDs: ids[n:]}
	more, err := f.remove(ctx, replay.EventReplayed, rest, false)
	res.Done += more.Done
	return res, err
}

// TestJobsScreenStopsACanaryWaitingForItsAnswer: c on a canary job that
// waits at its "go on / stop" question stops it as s would: what the step
// replayed stays replayed, the rest stay parked.
func TestJobsScreenStopsACanaryWaitingForItsAnswer(t *testing.T) {
	fb := newFakeBackend(t.TempDir())
	seedDemo(fb)
	hs := &harness{t: t, fb: fb, msgs: make(chan tea.Msg, 1024)}
	hs.m = New(context.Background(), canaryFake{fb}, Options{
		Queue: "demo.error.dlq", Renderer: asciiRenderer(), Now: func() time.Time { return testNow },
		Editor: hs.editor, ExportDir: "/tmp/exports", Refresh: -1,
	})
	t.Cleanup(func() {
		if err := hs.m.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	hs.apply(tea.WindowSizeMsg{Width: 120, Height: 30})
	hs.exec(hs.m.Init())
	hs.until("loaded", hs.loaded)

	hs.press("R")
	hs.untilScreen("7 × → demo.main")
	hs.press("tab", "tab")
	hs.typeText("1")
	hs.press("enter")
	hs.until("the canary's question", func() bool { return hs.m.dialog != nil && hs.m.dialog.state == dlgCanaryAsk })
	hs.press("b")
	hs.until("the job in the background", func() bool { return hs.m.dialog == nil && len(hs.m.jobs) == 1 })
	hs.press("J")
	hs.untilScreen("waiting for you")
	hs.press("c")
	hs.untilScreen("done: demo.error.dlq: replayed 1 — stopped after a canary step")
	if n := len(hs.fb.ids("demo.error.dlq")); n != 6 {
		t.Fatalf("%d still parked, want 6", n)
	}
	if strings.Contains(hs.screen(), "waiting for you") {
		t.Fatalf("the job still waits:\n%s", hs.screen())
	}
}
