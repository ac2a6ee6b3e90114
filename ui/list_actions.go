package ui

import (
	"fmt"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
)

// What each action key acts on (also in the README's key table):
//   - r, e: the message under the cursor (r on a group row: that group);
//   - R, d, x: the selection when there is one; otherwise, on a group row,
//     that group; otherwise R and x take every message shown (the filtered
//     set, the opened group or the whole list) and d the message under the
//     cursor.
//
// The dialog always says how many messages and which, before anything
// happens, and the IDs are fixed when it opens: what you saw is what is
// acted on.
func (m *messagesScreen) action(msg tea.KeyMsg) tea.Cmd {
	k := m.c.keys
	var what string
	var ids []string
	switch {
	case key.Matches(msg, k.ReplayOne), key.Matches(msg, k.Edit):
		what, ids = m.underCursor()
	case key.Matches(msg, k.Delete):
		if what, ids = m.chosen(); ids == nil {
			what, ids = m.underCursor()
		}
	default: // R, x
		if what, ids = m.chosen(); ids == nil {
			what, ids = m.shown()
		}
	}
	if len(ids) == 0 {
		return status(statusInfo, "nothing to act on here")
	}
	// Messages may share an id (parked twice); replay acts on one copy
	// per id and pass, and the dialog says so.
	rows := len(ids)
	ids = dedupe(ids)
	if key.Matches(msg, k.Edit) && (m.grouped || len(ids) != 1) {
		return status(statusInfo, "edit works on one message: open the group (enter) and pick one")
	}
	m.stopLoading()
	var d *dialog
	switch {
	case key.Matches(msg, k.ReplayOne), key.Matches(msg, k.ReplayMany):
		d = newReplayDialog(m.c, m.queue, what, ids)
	case key.Matches(msg, k.Edit):
		d = newEditDialog(m.c, m.queue, ids[0])
	case key.Matches(msg, k.Delete):
		d = newDeleteDialog(m.c, m.queue, what, ids)
	default:
		d = newExportDialog(m.c, m.queue, what, ids)
	}
	d.shared = rows - len(ids)
	return openDialog(d)
}

// underCursor is the message (or, grouped, the group) under the cursor.
func (m *messagesScreen) underCursor() (string, []string) {
	if g, ok := m.currentGroup(); ok {
		return m.groupWhat(g), m.groupIDs(g)
	}
	if s, ok := m.current(); ok {
		return "message " + clean(s.ID), []string{s.ID}
	}
	return "", nil
}

// chosen is the selection; or, on a group row, that group; or nothing.
func (m *messagesScreen) chosen() (string, []string) {
	if len(m.selected) > 0 {
		ids := make([]string, 0, len(m.selected))
		for _, i := range m.orderedAll() {
			if id := m.data.all[i].ID; m.selected[id] {
				ids = append(ids, id)
			}
		}
		return fmt.Sprintf("%d selected message(s)", len(dedupe(ids))), ids
	}
	if g, ok := m.currentGroup(); ok {
		return m.groupWhat(g), m.groupIDs(g)
	}
	return "", nil
}

// shown is every message the list shows.
func (m *messagesScreen) shown() (string, []string) {
	ids := m.shownIDs()
	n := len(ids)
	switch {
	case m.openGroup != "" && m.filter.Value() == "":
		return fmt.Sprintf("group “%s” (%d messages)", cut(clean(m.openGroup), 40), n), ids
	case m.filter.Value() != "" || m.openGroup != "":
		return fmt.Sprintf("%d message(s) matching “%s”", n, cut(clean(m.filter.Value()), 30)), ids
	}
	return fmt.Sprintf("all %d message(s) shown", n), ids
}

func (m *messagesScreen) groupWhat(g msgGroup) string {
	return fmt.Sprintf("group “%s” (%d messages)", cut(clean(g.Key), 40), len(g.Indices))
}

func (m *messagesScreen) groupIDs(g msgGroup) []string {
	ids := make([]string, 0, len(g.Indices))
	for _, i := range g.Indices {
		ids = append(ids, m.data.all[i].ID)
	}
	return ids
}

// orderedAll is every index in queue order (the selection keeps it).
func (m *messagesScreen) orderedAll() []int {
	idx := make([]int, len(m.data.all))
	for i := range idx {
		idx[i] = i
	}
	return idx
}
