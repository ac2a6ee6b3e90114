package ui

import (
	"math/bits"

	"github.com/parkinglot/parkinglot/replay"
)

// Selection and the cursor of the messages screen. Selected messages are
// kept as a bit a message of the current browse (125 KB for a million),
// so they survive re-sorting and filtering; a reload carries them over by
// id (carrySelection).
type selection struct {
	bits []uint64
	n    int
}

func (s *selection) has(i int32) bool {
	w := int(i) / 64
	return w < len(s.bits) && s.bits[w]&(1<<(uint(i)%64)) != 0
}

func (s *selection) set(i int32, on bool) {
	w, b := int(i)/64, uint64(1)<<(uint(i)%64)
	if w >= len(s.bits) {
		if !on {
			return
		}
		s.bits = append(s.bits, make([]uint64, w+1-len(s.bits))...)
	}
	switch {
	case on && s.bits[w]&b == 0:
		s.bits[w] |= b
		s.n++
	case !on && s.bits[w]&b != 0:
		s.bits[w] &^= b
		s.n--
	}
}

func (s *selection) len() int { return s.n }
func (s *selection) clear()   { *s = selection{} }

// indices are the selected messages in queue order.
func (s *selection) indices() []int32 {
	out := make([]int32, 0, s.n)
	for w, word := range s.bits {
		for word != 0 {
			b := bits.TrailingZeros64(word)
			out = append(out, int32(w*64+b))
			word &^= 1 << uint(b)
		}
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
	ids, err := old.ids(m.selected.indices())
	m.selected.clear()
	if err != nil {
		return // unreadable: forget the selection rather than guess
	}
	want := make(map[string]bool, len(ids))
	for _, id := range ids {
		want[id] = true
	}
	_ = m.data.scan(0, func(i int32, rec []byte) bool {
		if id, _, err := readID(rec); err == nil && want[id] {
			m.selected.set(i, true)
		}
		return true
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
