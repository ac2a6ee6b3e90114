package ui

import (
	"github.com/parkinglot/parkinglot/broker/store"
	"github.com/parkinglot/parkinglot/replay"
)

// Selection and the cursor of the messages screen. Selected messages are
// kept as a bit a message of the current browse (125 KB for a million),
// so they survive re-sorting and filtering; a reload carries them over by
// id (carrySelection).
type selection struct{ bits store.BitSet }

func (s *selection) has(i int32) bool     { return s.bits.Has(int(i)) }
func (s *selection) set(i int32, on bool) { s.bits.Put(int(i), on) }
func (s *selection) len() int             { return s.bits.Len() }
func (s *selection) clear()               { s.bits.Clear() }

// indices are the selected messages in queue order.
func (s *selection) indices() []int32 {
	out := make([]int32, 0, s.bits.Len())
	for i := range s.bits.All() {
		out = append(out, int32(i))
	}
	return out
}

func (m *messagesScreen) toggleSelect() {
	if m.grouped {
		g, ok := m.currentGroup()
		if !ok {
			return
		}
		all := true
		for _, i := range g.Indices {
			all = all && m.selected.has(i)
		}
		for _, i := range g.Indices {
			m.selected.set(i, !all)
		}
	} else if i, ok := m.currentIndex(); ok {
		m.selected.set(i, !m.selected.has(i))
	}
	m.list.move(1)
}

func (m *messagesScreen) selectAllShown() {
	for _, i := range m.shownIndices() {
		m.selected.set(i, true)
	}
}

// carrySelection moves the selection from the browse old to the one now
// shown, by id: a message selected before a reload stays selected if it
// is still there, and one that left is forgotten.
func (m *messagesScreen) carrySelection(old *msgIndex) {
	if m.selected.len() == 0 {
		return
	}
	want, err := old.idSet(m.selected.indices())
	m.selected.clear()
	if err != nil {
		return // unreadable: forget the selection rather than guess
	}
	defer want.Close()
	_ = m.data.rows.ScanIDs(0, func(i int32, id string) bool {
		in, err := want.Contains(id)
		if in {
			m.selected.set(i, true)
		}
		return err == nil
	})
}

// currentIndex is the message under the cursor.
func (m *messagesScreen) currentIndex() (int32, bool) {
	if m.grouped || m.list.cursor >= len(m.rows) {
		return 0, false
	}
	return m.rows[m.list.cursor], true
}

// current is the summary of the message under the cursor (read back from
// the list's file).
func (m *messagesScreen) current() (replay.Summary, bool) {
	i, ok := m.currentIndex()
	if !ok {
		return replay.Summary{}, false
	}
	s, err := m.data.summary(i)
	return s, err == nil
}

func (m *messagesScreen) currentGroup() (msgGroup, bool) {
	if !m.grouped || m.list.cursor >= len(m.groups) {
		return msgGroup{}, false
	}
	return m.groups[m.list.cursor], true
}

// seekIndex puts the cursor back on message i after the order changed.
func (m *messagesScreen) seekIndex(i int32, ok bool) {
	if !ok || m.grouped {
		return
	}
	for pos, r := range m.rows {
		if r == i {
			m.list.cursor = pos
			m.list.clamp()
			return
		}
	}
}

// shownIndices are the messages of every row shown (not only the window).
func (m *messagesScreen) shownIndices() []int32 {
	if !m.grouped {
		return m.rows
	}
	var idx []int32
	for _, g := range m.groups {
		idx = append(idx, g.Indices...)
	}
	return idx
}
