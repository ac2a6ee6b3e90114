package ui

import "github.com/parkinglot/parkinglot/replay"

// Selection and the cursor of the messages screen: selected messages are
// kept by id, so they survive re-sorting, filtering and reloads.

func (m *messagesScreen) toggleSelect() {
	if m.grouped {
		g, ok := m.currentGroup()
		if !ok {
			return
		}
		all := true
		for _, i := range g.Indices {
			all = all && m.selected[m.data.all[i].ID]
		}
		for _, i := range g.Indices {
			m.setSelected(m.data.all[i].ID, !all)
		}
	} else if s, ok := m.current(); ok {
		m.setSelected(s.ID, !m.selected[s.ID])
	}
	m.list.move(1)
}

func (m *messagesScreen) setSelected(id string, on bool) {
	if on {
		m.selected[id] = true
	} else {
		delete(m.selected, id)
	}
}

func (m *messagesScreen) selectAllShown() {
	for _, id := range m.shownIDs() {
		m.selected[id] = true
	}
}

// pruneSelection forgets selected messages that are no longer there.
func (m *messagesScreen) pruneSelection() {
	present := make(map[string]bool, len(m.data.all))
	for _, s := range m.data.all {
		present[s.ID] = true
	}
	for id := range m.selected {
		if !present[id] {
			delete(m.selected, id)
		}
	}
}

func (m *messagesScreen) current() (replay.Summary, bool) {
	if m.grouped || m.list.cursor >= len(m.rows) {
		return replay.Summary{}, false
	}
	return m.data.all[m.rows[m.list.cursor]], true
}

func (m *messagesScreen) currentGroup() (msgGroup, bool) {
	if !m.grouped || m.list.cursor >= len(m.groups) {
		return msgGroup{}, false
	}
	return m.groups[m.list.cursor], true
}

func (m *messagesScreen) cursorID() string {
	if s, ok := m.current(); ok {
		return s.ID
	}
	return ""
}

// seek puts the cursor back on message id after the order changed.
func (m *messagesScreen) seek(id string) {
	if id == "" || m.grouped {
		return
	}
	for pos, i := range m.rows {
		if m.data.all[i].ID == id {
			m.list.cursor = pos
			m.list.clamp()
			return
		}
	}
}

// shownIDs are the ids of every row shown (not only the window), with
// repeats when messages share an id.
func (m *messagesScreen) shownIDs() []string {
	var ids []string
	if m.grouped {
		for _, g := range m.groups {
			for _, i := range g.Indices {
				ids = append(ids, m.data.all[i].ID)
			}
		}
	} else {
		for _, i := range m.rows {
			ids = append(ids, m.data.all[i].ID)
		}
	}
	return ids
}

// dedupe returns ids without repeats (a new slice; the order kept).
func dedupe(ids []string) []string {
	seen := make(map[string]bool, len(ids))
	out := make([]string, 0, len(ids))
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}
