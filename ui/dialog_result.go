package ui

import (
	"context"
	"errors"
	"fmt"

	tea "github.com/charmbracelet/bubbletea"
)

// The end of a dialog: the status line that says what was done, the
// reload of the list, and closing (which lets the action throw away what
// it holds, such as an unsent edit).

func (d *dialog) finished(msg actionDoneMsg) tea.Cmd {
	d.result, d.err = msg.res, msg.err
	d.act.finished(d)
	text, kind := d.summary()
	removed := d.act.removes() && d.result.Done > 0
	added := d.act.adds() && d.result.Done > 0
	refresh := func() tea.Msg { return refreshQueueMsg{queue: d.queue, removed: removed, added: added} }
	if d.background {
		// A job keeps its result on the jobs screen until dismissed.
		d.state = dlgDone
		return tea.Batch(refresh, status(kind, "job on "+d.queue+": "+text))
	}
	if d.err == nil && d.result.Failed == 0 {
		return tea.Batch(refresh, d.close(text, kind))
	}
	d.state = dlgDone
	return tea.Batch(refresh, status(kind, text))
}

// summary is the status line: what was done, and what failed and why.
func (d *dialog) summary() (string, statusKind) {
	r := d.result
	text := fmt.Sprintf("%s %d", d.act.verb(), r.Done)
	if to := d.act.savedTo(); to != "" && d.err == nil {
		text += " to " + to
	}
	kind := statusOK
	if r.Skipped > 0 {
		text += fmt.Sprintf(", %d skipped", r.Skipped)
	}
	if r.NotSent > 0 {
		text += fmt.Sprintf(", %d not sent (still parked)", r.NotSent)
	}
	if r.Failed > 0 {
		kind = statusWarn
		text += fmt.Sprintf(", %d failed", r.Failed)
		if len(r.Failures) > 0 {
			text += ": " + clean(r.Failures[0].Err)
			if r.Failed > 1 {
				text += fmt.Sprintf(" (and %d more)", r.Failed-1)
			}
		}
	}
	canary, isCanary := canarySummary(d.err)
	switch {
	case isCanary:
		kind = statusWarn
		text += " — " + clean(canary)
	case errors.Is(d.err, context.Canceled):
		kind = statusWarn
		text = "cancelled: " + text
	case d.err != nil:
		kind = statusError
		if t, ok := d.act.errorText(d); ok {
			text = t
		} else {
			text += " — " + clean(d.err.Error())
		}
	}
	return text, kind
}

// close removes the dialog, discarding an unsent edit.
func (d *dialog) close(text string, kind statusKind) tea.Cmd {
	// Nothing runs once the dialog closes: a plan still on its way is
	// stopped (the list's reload waits for its give-back, common.turn).
	if r := routeOf(d); r != nil {
		r.stop()
	}
	d.ids.Close()
	d.act.discard(d)
	closeCmd := func() tea.Msg { return closeDialogMsg{d} }
	if text == "" {
		return closeCmd
	}
	return tea.Batch(closeCmd, status(kind, text))
}

// abort stops the dialog when the program quits.
func (d *dialog) abort() {
	if d.run != nil {
		d.run.cancel()
	}
	if r := routeOf(d); r != nil {
		r.stop()
	}
	d.act.discard(d)
}
