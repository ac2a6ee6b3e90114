package ui

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/parkinglot/parkinglot/broker/store"
	"github.com/parkinglot/parkinglot/replay"
)

// replayAction sends the chosen messages back to where they came from, or
// to a typed destination. Several messages also take a rate and a canary.
type replayAction struct {
	actionBase
	route    routePart
	rate     textinput.Model
	rateFrom string     // the configured rate the field was filled with, "" when none
	cn       canaryPart // dialog_canary.go
	bulk     bool
}

func newReplayDialog(c *common, queue, what string, ids *store.IDSet, n int) *dialog {
	d := newDialog(c, queue, what, ids, n)
	a := &replayAction{route: newRoutePart(), bulk: d.bulk}
	a.rate = newTextField("messages/s (empty: no limit)", 12)
	a.cn.init()
	// The parking lot's configured rate, as the CLI applies it.
	if r := c.backend.ParkingLotDefaults(queue).Rate; r > 0 {
		a.rateFrom = strconv.FormatFloat(r, 'f', -1, 64)
		a.rate.SetValue(a.rateFrom)
	}
	return d.opened(a, dlgConfirm)
}

func (a *replayAction) name() string { return "replay" }
func (a *replayAction) verb() string { return "replayed" }
func (a *replayAction) title(n int) string {
	return fmt.Sprintf("Replay %d message(s)", n)
}

func (a *replayAction) begin(d *dialog) tea.Cmd { return a.route.replan(d) }

func (a *replayAction) fields() []*textinput.Model {
	if a.bulk {
		return []*textinput.Model{&a.route.dest, &a.rate, &a.cn.steps, &a.cn.wait}
	}
	return []*textinput.Model{&a.route.dest}
}

func (a *replayAction) setWidth(inner int) {
	a.route.dest.Width, a.rate.Width = inner, inner
	a.cn.steps.Width, a.cn.wait.Width = inner, inner
}

func (a *replayAction) update(d *dialog, msg tea.Msg) (tea.Cmd, bool) {
	if cmd, ok := a.route.update(d, msg); ok {
		return cmd, true
	}
	return a.cn.update(d, msg)
}

func (a *replayAction) request(d *dialog, req *ActionRequest) error {
	if err := a.route.request(d, req); err != nil {
		return err
	}
	if !a.bulk {
		return nil
	}
	if s := strings.TrimSpace(a.rate.Value()); s != "" {
		r, err := strconv.ParseFloat(s, 64)
		if err != nil || !replay.RateOK(r) {
			return fmt.Errorf("rate %q: want messages per second, such as 50 (%v or more; 0: as fast as confirms come)", s, replay.MinRate)
		}
		req.Rate = r
	}
	steps, wait, err := a.cn.parse()
	if err != nil {
		return err
	}
	req.Canary, req.CanaryWait = steps, wait
	return nil
}

func (a *replayAction) check(d *dialog) (string, tea.Cmd) { return a.route.check(d) }

func (a *replayAction) start(d *dialog, req ActionRequest) (*feed, tea.Cmd) {
	a.cn.arm(&req)
	return startAction(d.c, req, d.c.backend.Replay)
}

func (a *replayAction) lines(d *dialog, inner int) []string {
	switch d.state {
	case dlgConfirm:
		var more []string
		if a.bulk {
			more = append(more, d.field(1, "Rate", a.rate.View()))
			if a.rateFrom != "" && strings.TrimSpace(a.rate.Value()) == a.rateFrom {
				more = append(more, d.c.styles.Dim.Render("              from the config (parking_lots: rate)"))
			}
			more = append(more, a.cn.fieldLines(d)...)
		}
		return a.route.confirmLines(d, inner, more...)
	case dlgRunning:
		return append(d.progressLines(), a.cn.lines(d)...)
	case dlgCanaryAsk:
		return a.cn.lines(d)
	case dlgDone:
		lines := []string{d.summaryLine()}
		if a.cn.up != nil && a.cn.up.Ended {
			lines = append(lines, a.cn.lines(d)...)
		}
		return append(lines, d.outcomeLines()...)
	}
	return nil
}

func (a *replayAction) help(d *dialog) []key.Binding {
	if d.state == dlgCanaryAsk {
		return a.cn.help(d)
	}
	return a.route.help(d)
}
