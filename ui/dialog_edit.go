package ui

import (
	"context"
	"errors"
	"fmt"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/parkinglot/parkinglot/replay"
)

// editAction replays one message with a body changed in $EDITOR. The
// backend keeps the body as a draft until it is sent; the dialog throws
// the draft away when it closes unsent, and keeps an invalid one to edit
// again.
type editAction struct {
	actionBase
	route routePart
	id    string
	draft *EditDraft
	// closed: the dialog is gone; a draft still on its way is thrown away.
	closed bool
}

func newEditDialog(c *common, queue, id string) *dialog {
	d := newDialog(c, queue, "message "+clean(id), nil, 1)
	return d.opened(&editAction{route: newRoutePart(), id: id}, dlgPreparing)
}

func (a *editAction) name() string     { return "edit" }
func (a *editAction) verb() string     { return "replayed (edited)" }
func (a *editAction) title(int) string { return "Edit and replay" }

func (a *editAction) begin(d *dialog) tea.Cmd { return prepareEdit(d.c, d, d.queue, a.id) }

func (a *editAction) fields() []*textinput.Model { return []*textinput.Model{&a.route.dest} }
func (a *editAction) setWidth(inner int)         { a.route.dest.Width = inner }

func (a *editAction) update(d *dialog, msg tea.Msg) (tea.Cmd, bool) {
	if cmd, ok := a.route.update(d, msg); ok {
		return cmd, true
	}
	k := d.c.keys
	switch msg := msg.(type) {
	case editReadyMsg:
		if msg.d != d {
			return nil, true
		}
		if a.closed {
			// Cancelled while it was prepared: the file holds the body.
			if msg.draft != nil {
				d.c.backend.DiscardEdit(msg.draft)
			}
			return nil, true
		}
		if msg.err != nil {
			d.state, d.err = dlgDone, fmt.Errorf("prepare edit: %w", msg.err)
			return nil, true
		}
		a.draft = msg.draft
		return a.openEditor(d), true
	case editorDoneMsg:
		if msg.d != d {
			return nil, true
		}
		if msg.err != nil {
			d.state, d.err = dlgDone, fmt.Errorf("editor: %w", msg.err)
			return nil, true
		}
		d.state, d.err = dlgConfirm, nil
		return tea.Batch(a.route.replan(d), d.focusField(0)), true
	case tea.KeyMsg:
		switch {
		case d.state == dlgPreparing:
			if key.Matches(msg, k.Cancel) {
				return d.close("edit cancelled — nothing changed", statusInfo), true
			}
			return nil, true
		case d.state == dlgDone && a.draft != nil && key.Matches(msg, k.EditAgain):
			return a.openEditor(d), true
		case d.state == dlgDone && a.draft != nil && key.Matches(msg, k.Confirm, k.Close):
			// Enter closes a finished dialog, which would throw the kept
			// edit away: only esc does that, as the help says.
			return nil, true
		}
	}
	return nil, false
}

func (a *editAction) openEditor(d *dialog) tea.Cmd {
	d.state, d.err = dlgPreparing, nil
	return d.c.editor(a.draft.Path, func(err error) tea.Msg { return editorDoneMsg{d: d, err: err} })
}

func (a *editAction) request(d *dialog, req *ActionRequest) error {
	req.Select = replay.Selector{IDs: []string{a.id}}
	return a.route.request(d, req)
}

func (a *editAction) check(d *dialog) (string, tea.Cmd) { return a.route.check(d) }

func (a *editAction) start(d *dialog, req ActionRequest) (*feed, tea.Cmd) {
	draft := a.draft
	return startAction(d.c, req, func(ctx context.Context, req ActionRequest) (replay.Result, error) {
		return d.c.backend.FinishEdit(ctx, draft, req)
	})
}

func (a *editAction) lines(d *dialog, inner int) []string {
	st := d.c.styles
	switch d.state {
	case dlgPreparing:
		return []string{"Opening the body in $EDITOR…", st.Dim.Render("save and quit the editor to continue; nothing is sent before you confirm")}
	case dlgConfirm:
		return a.route.confirmLines(d, inner)
	case dlgDone:
		lines := d.runLines()
		if a.draft != nil {
			lines = append(lines, "", st.Dim.Render("Nothing was sent. Your edit is kept: e opens it again, esc throws it away."))
		}
		return lines
	}
	return d.runLines()
}

func (a *editAction) help(d *dialog) []key.Binding {
	k := d.c.keys
	switch d.state {
	case dlgPreparing:
		return []key.Binding{k.Cancel}
	case dlgDone:
		if a.draft != nil {
			return []key.Binding{k.EditAgain, k.Discard}
		}
		return nil
	}
	return a.route.help(d)
}

// finished drops the draft the backend used up; only an invalid edit is
// kept to try again.
func (a *editAction) finished(d *dialog) {
	if !errors.Is(d.err, replay.ErrInvalidBody) {
		a.draft = nil
	}
}

func (a *editAction) errorText(d *dialog) (string, bool) {
	if d.result.Done == 0 {
		return "edit not sent: " + clean(d.err.Error()), true
	}
	return "", false
}

func (a *editAction) discard(d *dialog) {
	a.closed = true
	if a.draft != nil {
		d.c.backend.DiscardEdit(a.draft)
		a.draft = nil
	}
}
