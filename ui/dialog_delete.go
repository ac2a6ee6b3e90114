package ui

import (
	"fmt"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/parkinglot/parkinglot/broker/store"
)

// deleteAction removes the chosen messages from the parking lot for good.
type deleteAction struct{ actionBase }

func newDeleteDialog(c *common, queue, what string, ids *store.IDSet, n int) *dialog {
	return newDialog(c, queue, what, ids, n).opened(deleteAction{}, dlgConfirm)
}

func (deleteAction) name() string { return "delete" }
func (deleteAction) verb() string { return "deleted" }
func (deleteAction) title(n int) string {
	return fmt.Sprintf("Delete %d message(s)", n)
}

func (deleteAction) start(d *dialog, req ActionRequest) (*feed, tea.Cmd) {
	return startAction(d.c, req, d.c.backend.Delete)
}

func (deleteAction) lines(d *dialog, _ int) []string {
	st := d.c.styles
	if d.state == dlgConfirm {
		return []string{st.Warning.Render("The messages are removed from the parking lot for good."),
			st.Dim.Render("Export them first (x) to keep a copy.")}
	}
	return d.runLines()
}
