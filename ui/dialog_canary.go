package ui

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/cursor"
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/parkinglot/parkinglot/replay"
	"github.com/parkinglot/parkinglot/ui/format"
)

// canaryPart is the replay dialog's canary (README, "Canary replays"):
// two fields, then, while it runs, each step's wait with a countdown and
// what came back so far, and at the end of each step none of whose
// messages came back, the choice between going on and stopping.
type canaryPart struct {
	steps, wait textinput.Model
	planned     []int // the steps of the running canary
	// answer carries the person's choice to the engine's Proceed
	// (capacity 1: a key press never blocks the UI).
	answer   chan bool
	up       *CanaryUpdate // the step as it stands; nil before the first
	deadline time.Time     // when the step's wait ends
	ticking  bool
}

// canaryTickMsg redraws the countdown once a second.
type canaryTickMsg struct{ d *dialog }

func (cp *canaryPart) init() {
	cp.steps = textinput.New()
	cp.steps.Prompt = ""
	cp.steps.Placeholder = "N, or steps 1,10,100 (empty: no canary)"
	cp.steps.CharLimit = 64
	cp.wait = textinput.New()
	cp.wait.Prompt = ""
	cp.wait.Placeholder = replay.DefaultCanaryWait.String() + " (how long each step is watched)"
	cp.wait.CharLimit = 16
	for _, f := range []*textinput.Model{&cp.steps, &cp.wait} {
		f.Cursor.SetMode(cursor.CursorStatic)
	}
}

// parse reads the fields: no steps is no canary.
func (cp *canaryPart) parse() ([]int, time.Duration, error) {
	s := strings.TrimSpace(cp.steps.Value())
	w := strings.TrimSpace(cp.wait.Value())
	if s == "" {
		return nil, 0, nil
	}
	steps, err := replay.ParseRamp(s)
	if err != nil {
		return nil, 0, fmt.Errorf("canary %q: want a number of messages, or growing steps such as 1,10,100", s)
	}
	var wait time.Duration
	if w != "" {
		wait, err = time.ParseDuration(w)
		if err != nil || wait <= 0 {
			return nil, 0, fmt.Errorf("wait %q: want a duration such as 30s or 2m", w)
		}
	}
	return steps, wait, nil
}

// arm prepares req for a canary run: the choice channel and Proceed.
func (d *dialog) armCanary(req *ActionRequest) {
	if req.Canary == nil {
		return
	}
	ch := make(chan bool, 1)
	d.cn.answer, d.cn.planned, d.cn.up = ch, req.Canary, nil
	req.Proceed = func(ctx context.Context, _ replay.CanaryStep) bool {
		select {
		case ok := <-ch:
			return ok
		case <-ctx.Done():
			return false
		}
	}
}

// canaryUpdate shows a step's wait or end; a step that ended with none
// back asks whether to go on (the engine waits in Proceed).
func (d *dialog) canaryUpdate(u CanaryUpdate) tea.Cmd {
	d.cn.up = &u
	if u.Ended {
		if u.Step.CameBack == 0 && d.state == dlgRunning && !d.cancelling {
			d.state = dlgCanaryAsk
		}
		return nil
	}
	d.cn.deadline = d.c.now().Add(u.Left)
	return d.tick()
}

func (d *dialog) tick() tea.Cmd {
	if d.cn.ticking {
		return nil
	}
	d.cn.ticking = true
	return tea.Tick(time.Second, func(time.Time) tea.Msg { return canaryTickMsg{d} })
}

func (d *dialog) canaryTick() tea.Cmd {
	d.cn.ticking = false
	if d.state == dlgRunning && d.cn.up != nil && !d.cn.up.Ended {
		return d.tick()
	}
	return nil
}

// canaryKey answers the question at the end of a step.
func (d *dialog) canaryKey(msg tea.KeyMsg) tea.Cmd {
	k := d.c.keys
	switch {
	case key.Matches(msg, k.CanaryGo):
		d.answerCanary(true)
	case key.Matches(msg, k.CanaryStop):
		d.answerCanary(false)
	}
	return nil
}

func (d *dialog) answerCanary(goOn bool) {
	select {
	case d.cn.answer <- goOn:
	default: // already answered
	}
	d.state = dlgRunning
	if !goOn {
		d.cancelling = true // shown as stopping; the engine ends the run
	}
}

// nextText is what going on does after step n (1-based).
func (cp *canaryPart) nextText(n int) string {
	if n < len(cp.planned) {
		return fmt.Sprintf("go on: canary step %d (%d messages)", n+1, cp.planned[n])
	}
	return "replay the rest"
}

// canaryFieldLines are the dialog's canary fields (focus indexes 2, 3).
func (d *dialog) canaryFieldLines() []string {
	lines := []string{
		d.field(2, "Canary", d.cn.steps.View()),
		d.field(3, "Wait", d.cn.wait.View()),
	}
	if d.focus >= 2 { // what a canary does, while its fields are typed in
		lines = append(lines, d.c.styles.Dim.Render("              the first N go, then the parking lot is watched for them"))
	}
	return lines
}

// canaryLines show the step as it stands, while running or asking.
func (d *dialog) canaryLines() []string {
	u := d.cn.up
	if u == nil {
		return nil
	}
	st := d.c.styles
	s := u.Step
	var lines []string
	switch {
	case u.Ended && s.CameBack == 0:
		lines = append(lines, st.Bold.Render(fmt.Sprintf("canary step %d: none of %d came back in %s", s.Step, s.Replayed, format.Age(s.Waited))))
	case u.Ended:
		lines = append(lines, st.Warning.Render(fmt.Sprintf("canary step %d: %d of %d came back — the rest stay parked", s.Step, s.CameBack, s.Replayed)))
	default:
		left := max(d.cn.deadline.Sub(d.c.now()), 0).Round(time.Second)
		lines = append(lines, fmt.Sprintf("canary step %d: %d replayed — waiting %s more, %d came back so far", s.Step, s.Replayed, left, s.CameBack))
	}
	for _, g := range slices.Sorted(maps.Keys(s.Groups)) {
		text := clean(g)
		if text == "" {
			text = "(no error recorded)"
		}
		lines = append(lines, st.Warning.Render(fmt.Sprintf("  %d × %s", s.Groups[g], text)))
	}
	if d.state == dlgCanaryAsk {
		lines = append(lines, "", fmt.Sprintf("enter: %s · s: stop (the rest stay parked)", d.cn.nextText(s.Step)))
	}
	return lines
}

// canarySummary words a canary's end for the status line; ok is false
// when err is not a canary's.
func canarySummary(err error) (string, bool) {
	var back *replay.CameBackError
	switch {
	case errors.As(err, &back):
		return back.Error(), true
	case errors.Is(err, replay.ErrCanaryStopped):
		return err.Error(), true
	}
	return "", false
}
