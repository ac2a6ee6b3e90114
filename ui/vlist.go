package ui

import (
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
)

// vlist is the virtualised list: only a cursor, an offset and a height, so
// a key press costs the same with 100 rows as with 100,000 and View draws
// only the visible window.
type vlist struct {
	cursor, offset, height, count int
}

func (l *vlist) setCount(n int) {
	l.count = n
	l.clamp()
}

func (l *vlist) setHeight(h int) {
	l.height = max(h, 1)
	l.clamp()
}

func (l *vlist) move(delta int) {
	l.cursor += delta
	l.clamp()
}

// navigate moves the cursor for the keymap's movement keys (up, down,
// page, top, bottom) and reports whether msg was one.
func (l *vlist) navigate(k *KeyMap, msg tea.KeyMsg) bool {
	switch {
	case key.Matches(msg, k.Up):
		l.move(-1)
	case key.Matches(msg, k.Down):
		l.move(1)
	case key.Matches(msg, k.PageUp):
		l.page(-1)
	case key.Matches(msg, k.PageDown):
		l.page(1)
	case key.Matches(msg, k.Top):
		l.top()
	case key.Matches(msg, k.Bottom):
		l.bottom()
	default:
		return false
	}
	return true
}

func (l *vlist) top()    { l.cursor = 0; l.clamp() }
func (l *vlist) bottom() { l.cursor = l.count - 1; l.clamp() }
func (l *vlist) page(n int) {
	l.move(n * max(l.height-1, 1))
}

func (l *vlist) clamp() {
	if l.cursor >= l.count {
		l.cursor = l.count - 1
	}
	if l.cursor < 0 {
		l.cursor = 0
	}
	if l.cursor < l.offset {
		l.offset = l.cursor
	}
	if l.cursor >= l.offset+l.height {
		l.offset = l.cursor - l.height + 1
	}
	if maxOff := l.count - l.height; l.offset > maxOff {
		l.offset = max(maxOff, 0)
	}
	if l.offset < 0 {
		l.offset = 0
	}
}

// window is the half-open range of rows on screen.
func (l vlist) window() (from, to int) {
	return l.offset, min(l.offset+l.height, l.count)
}

// draw writes the visible rows to b, row(i, atCursor) each, the one under
// the cursor marked; the empty text when there are none; then blank lines
// to the list's height, so what follows (the status bar) stays put.
func (l *vlist) draw(b *strings.Builder, st *Styles, empty string, row func(i int, atCursor bool) string) {
	from, to := l.window()
	if to <= from {
		b.WriteString(st.Dim.Render(empty))
		b.WriteString("\n")
		from, to = 0, 1
	}
	for i := from; i < to && i < l.count; i++ {
		atCursor := i == l.cursor
		line := row(i, atCursor)
		if atCursor {
			// Plain text inside: a nested style's reset would end the
			// reverse video half-way.
			line = st.Cursor.Render("▸" + line[len(" "):])
		}
		b.WriteString(line)
		b.WriteString("\n")
	}
	for i := to - from; i < l.height; i++ {
		b.WriteString("\n")
	}
}
