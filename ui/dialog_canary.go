package ui

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/parkinglot/parkinglot/replay"
	"github.com/parkinglot/parkinglot/ui/format"
)

// canaryPart is the replay dialog's canary: the first few messages go,
// then the parking lot is watched for them before the rest follow, so a
// fix that does not hold costs a few messages, not all. It has two
// fields, then, while it runs, each step's wait with a countdown and what
// came back so far, and at the end of each step none of whose messages
// came back, the choice between going on and stopping.
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
	cp.steps = newTextField("N, or steps 1,10,100 (empty: no canary)", 64)
	cp.wait = newTextField(replay.DefaultCanaryWait.String()+" (how long each step is watched)", 16)
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
func (cp *canaryPart) arm(req *ActionRequest) {
	if req.Canary == nil {
		return
	}
	ch := make(chan bool, 1)
	cp.answer, cp.planned, cp.up = ch, req.Canary, nil
	req.Proceed = func(ctx context.Context, _ replay.CanaryStep) bool {
		select {
		case ok := <-ch:
			return ok
		case <-ctx.Done():
			return false
		}
	}
}

// update takes the canary's steps and the countdown's ticks, and the
// answer at the end of a step.
func (cp *canaryPart) update(d *dialog, msg tea.Msg) (tea.Cmd, bool) {
	switch msg := msg.(type) {
	case feedCanaryMsg:
		if msg.f == d.run {
			return tea.Batch(cp.step(d, msg.u), d.run.next()), true
		}
	case canaryTickMsg:
		if msg.d == d {
			return cp.tock(d), true
		}
	case tea.KeyMsg:
		if d.state == dlgCanaryAsk {
			return nil, cp.key(d, msg)
		}
	}
	return nil, false
}

// step shows a step's wait or end; a step that ended with none back asks
// whether to go on (the engine waits in Proceed).
func (cp *canaryPart) step(d *dialog, u CanaryUpdate) tea.Cmd {
	cp.up = &u
	if u.Ended {
		if u.Step.CameBack == 0 && d.state == dlgRunning && !d.cancelling {
			d.state = dlgCanaryAsk
		}
		return nil
	}
	cp.deadline = d.c.now().Add(u.Left)
	return cp.tick(d)
}

func (cp *canaryPart) tick(d *dialog) tea.Cmd {
	if cp.ticking {
		return nil
	}
	cp.ticking = true
	return tea.Tick(time.Second, func(time.Time) tea.Msg { return canaryTickMsg{d} })
}

func (cp *canaryPart) tock(d *dialog) tea.Cmd {
	cp.ticking = false
	if d.state == dlgRunning && cp.up != nil && !cp.up.Ended {
		return cp.tick(d)
	}
	return nil
}

// key answers the question at the end of a step; it reports whether msg
// was an answer.
func (cp *canaryPart) key(d *dialog, msg tea.KeyMsg) bool {
	k := d.c.keys
	switch {
	case key.Matches(msg, k.CanaryGo):
		cp.reply(d, true)
	case key.Matches(msg, k.CanaryStop):
		cp.reply(d, false)
	default:
		return false
	}
	return true
}

func (cp *canaryPart) reply(d *dialog, goOn bool) {
	select {
	case cp.answer <- goOn:
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

// fieldLines are the dialog's canary fields (focus indexes 2, 3).
func (cp *canaryPart) fieldLines(d *dialog) []string {
	lines := []string{
		d.field(2, "Canary", cp.steps.View()),
		d.field(3, "Wait", cp.wait.View()),
	}
	if d.focus >= 2 { // what a canary does, while its fields are typed in
		lines = append(lines, d.c.styles.Dim.Render("              the first N go, then the parking lot is watched for them"))
	}
	return lines
}

// lines show the step as it stands, while running or asking.
func (cp *canaryPart) lines(d *dialog) []string {
	u := cp.up
	if u == nil {
		return nil
	}
	st := d.c.styles
	s := u.Step
	var lines []string
	switch {
	case u.Ended && s.CameBack == 0:
		lines = append(lines, st.Bold.Render(fmt.Sprintf("canary step %d: none of %d came back in %s", s.Step, max(s.Watched, s.Replayed), format.Age(s.Waited))))
	case u.Ended:
		lines = append(lines, st.Warning.Render(fmt.Sprintf("canary step %d: %d of %d came back — the rest stay parked", s.Step, s.CameBack, max(s.Watched, s.Replayed))))
	default:
		left := max(cp.deadline.Sub(d.c.now()), 0).Round(time.Second)
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
		lines = append(lines, "", fmt.Sprintf("enter: %s · s: stop (the rest stay parked)", cp.nextText(s.Step)))
	}
	return lines
}

// help is the question's keys: go on (with what that does), stop, or
// leave it as a job.
func (cp *canaryPart) help(d *dialog) []key.Binding {
	k := d.c.keys
	next := "replay the rest"
	if cp.up != nil {
		next = cp.nextText(cp.up.Step.Step)
	}
	return []key.Binding{described(k.CanaryGo, next), k.CanaryStop, k.Background}
}

// canarySummary words a canary's end for the status line; ok is false
// when err is not a canary's.
func canarySummary(err error) (string, bool) {
	var back *replay.CameBackError
	var none *replay.CanaryNoneReplayedError
	switch {
	case errors.As(err, &back):
		return back.Error(), true
	case errors.As(err, &none):
		return none.Error(), true
	case errors.Is(err, replay.ErrCanaryStopped):
		return err.Error(), true
	}
	return "", false
}
