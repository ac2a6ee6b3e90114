package ui

import (
	"fmt"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/parkinglot/parkinglot/ui/format"
)

// What each action key acts on (also in the README's key table):
//   - r, e: the message under the cursor (r on a group row: that group);
//   - R, d, x: the selection when there is one; otherwise, on a group row,
//     that group; otherwise R and x take every message shown (the filtered
//     set, the opened group or the whole list) and d the message under the
//     cursor.
//
// The dialog always says how many messages and which, before anything
// happens, and the IDs and the count are fixed when it opens: what you saw
// is what is acted on.
func (m *messagesScreen) action(msg tea.KeyMsg) tea.Cmd {
	k := m.c.keys
	var what string
	var idx []int32
	switch {
	case key.Matches(msg, k.ReplayOne), key.Matches(msg, k.Edit):
		what, idx = m.underCursor()
	case key.Matches(msg, k.Delete):
		if what, idx = m.chosen(); idx == nil {
			what, idx = m.underCursor()
		}
	default: // R, x
		if what, idx = m.chosen(); idx == nil {
			what, idx = m.shown()
		}
	}
	if len(idx) == 0 {
		return status(statusInfo, "nothing to act on here")
	}
	if key.Matches(msg, k.Edit) {
		if m.grouped || len(idx) != 1 {
			return status(statusInfo, "edit works on one message: open the group (enter) and pick one")
		}
		id, err := m.data.id(idx[0])
		if err != nil {
			return status(statusError, err.Error())
		}
		m.stopLoading()
		return openDialog(newEditDialog(m.c, m.queue, id))
	}
	// The chosen ids, compact however many (store.IDSet). Messages may
	// share an id (parked twice), and an id takes every message that
	// carries it: the dialog counts those, rows chosen or not.
	ids, err := m.data.idSet(idx)
	if err != nil {
		return status(statusError, err.Error())
	}
	n, err := m.data.carrying(ids)
	if err != nil {
		ids.Close()
		return status(statusError, err.Error())
	}
	n = max(n, len(idx))
	m.stopLoading()
	var d *dialog
	switch {
	case key.Matches(msg, k.ReplayOne), key.Matches(msg, k.ReplayMany):
		d = newReplayDialog(m.c, m.queue, what, ids, n)
	case key.Matches(msg, k.Delete):
		d = newDeleteDialog(m.c, m.queue, what, ids, n)
	default:
		d = newExportDialog(m.c, m.queue, what, ids, n)
	}
	d.copies = n - len(idx)
	return openDialog(d)
}

// underCursor is the message (or, grouped, the group) under the cursor.
func (m *messagesScreen) underCursor() (string, []int32) {
	if g, ok := m.currentGroup(); ok {
		return m.groupWhat(g), g.Indices
	}
	if i, ok := m.currentIndex(); ok {
		id, err := m.data.id(i)
		if err != nil {
			id = "?"
		}
		return "message " + clean(id), []int32{i}
	}
	return "", nil
}

// chosen is the selection (in queue order); or, on a group row, that
// group; or nothing.
func (m *messagesScreen) chosen() (string, []int32) {
	if m.selected.len() > 0 {
		return fmt.Sprintf("%d selected message(s)", m.selected.len()), m.selected.indices()
	}
	if g, ok := m.currentGroup(); ok {
		return m.groupWhat(g), g.Indices
	}
	return "", nil
}

// shown is every message the list shows.
func (m *messagesScreen) shown() (string, []int32) {
	idx := m.shownIndices()
	n := len(idx)
	switch {
	case m.openGroup != "" && m.filter.Value() == "":
		return fmt.Sprintf("group “%s” (%d messages)", format.Cut(clean(m.openGroup), 40), n), idx
	case m.filter.Value() != "" || m.openGroup != "":
		return fmt.Sprintf("%d message(s) matching “%s”", n, format.Cut(clean(m.filter.Value()), 30)), idx
	}
	return fmt.Sprintf("all %d message(s) shown", n), idx
}

func (m *messagesScreen) groupWhat(g msgGroup) string {
	return fmt.Sprintf("group “%s” (%d messages)", format.Cut(clean(g.Key), 40), len(g.Indices))
}
