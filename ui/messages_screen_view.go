package ui

import (
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"

	"github.com/parkinglot/parkinglot/ui/format"
)

// columns are the message list's widths for one terminal width.
type columns struct {
	id, age, origin, att, err int // att: the ATTEMPTS column, as wide as its header
	// back is the BACK column: whether the message came back after a
	// replay, as the CLI's list says it (format.CameBackShort).
	back int
}

// columns fit the widest id and origin when there is room, and give the
// error what is left: it is what people read first.
func (m *messagesScreen) columns() columns {
	w := m.width - 2 // the cursor and selection marks
	c := columns{age: 6, att: len("ATTEMPTS")}
	maxID := 24
	if w < 100 {
		maxID = 14
	}
	c.id = min(max(m.data.idWidth, 8), maxID)
	rest := w - c.id - c.age - c.att - 4 // four separating spaces
	// A group row says what came back before its error: no BACK column.
	if !m.grouped {
		c.back = len("2 other")
		rest -= c.back + 1
	}
	c.origin = min(max(m.data.originWidth, 12), max(rest*45/100, 12), 40)
	c.err = max(rest-c.origin, 8)
	return c
}

func (m *messagesScreen) View() string {
	st := m.c.styles
	var b strings.Builder
	if m.typing {
		b.WriteString(m.filter.View())
	} else {
		b.WriteString(format.Cut(m.infoLine(), m.width))
	}
	b.WriteString("\n")
	cols := m.columns()
	if m.grouped {
		b.WriteString(st.Header.Render(pad("  "+padLeft("COUNT", 6)+" "+pad("NEWEST", cols.age)+" "+pad("ORIGIN", cols.origin)+" ERROR GROUP", m.width)))
	} else {
		b.WriteString(st.Header.Render(pad("  "+pad("ID", cols.id)+" "+pad("AGE", cols.age)+" "+pad("ORIGIN", cols.origin)+" "+padLeft("ATTEMPTS", cols.att)+" "+pad("BACK", cols.back)+" ERROR", m.width)))
	}
	b.WriteString("\n")
	now := m.c.now()
	m.list.draw(&b, st, m.emptyText(), func(i int, atCursor bool) string {
		if m.grouped {
			return m.groupRow(m.groups[i], cols, now, !atCursor)
		}
		return m.messageRow(m.rows[i], cols, now, !atCursor)
	})
	return strings.TrimSuffix(b.String(), "\n")
}

func (m *messagesScreen) emptyText() string {
	switch {
	case m.loading:
		return "  Loading…"
	case m.badExpr():
		// Reloading runs the same expression again: the fix is to edit it.
		return "  " + clean(m.loadErr.Error()) + " — / to edit the filter, esc to remove it"
	case m.loadErr != nil:
		return "  " + clean(m.loadErr.Error()) + " — ctrl+r to try again"
	case m.data.len() == 0:
		return "  The queue is empty."
	default:
		return "  No message matches the filter."
	}
}

// messageRow is one message, exactly m.width cells wide; it starts with a
// space that the cursor mark replaces.
func (m *messagesScreen) messageRow(i int32, c columns, now time.Time, styled bool) string {
	mark := " "
	s, err := m.data.summary(i)
	switch {
	case m.selected.has(i):
		mark = m.selMark(styled)
	case err == nil && m.live != nil && m.live.newIDs[s.ID]:
		mark = "+" // arrived since the list opened (the info line counts them)
	}
	if err != nil {
		return " " + mark + pad(clean(err.Error()), m.width-2)
	}
	origin := originText(s)
	errText := clean(s.Facts.Error)
	if errText == "" {
		errText = "–"
	}
	line := " " + mark +
		pad(clean(s.ID), c.id) + " " +
		pad(format.Age(s.Age(now)), c.age) + " " +
		pad(origin, c.origin) + " " +
		padLeft(fitCount(s.Facts.Attempts, c.att), c.att) + " " +
		pad(format.CameBackShort(s.Facts), c.back) + " " +
		pad(errText, c.err)
	return line
}

func (m *messagesScreen) groupRow(g msgGroup, c columns, now time.Time, styled bool) string {
	mark := " "
	sel := 0
	for _, i := range g.Indices {
		if m.selected.has(i) {
			sel++
		}
	}
	if sel > 0 {
		mark = m.selMark(styled)
	}
	origins := strings.Join(g.Origins, ", ")
	if g.More {
		origins += ", …"
	}
	text := clean(g.Key)
	if text == "" {
		text = "(no error recorded)"
	}
	if g.CameBack > 0 {
		// First, so a long error does not cut it off.
		text = fmt.Sprintf("[%d came back] %s", g.CameBack, text)
	}
	age := "–"
	if !g.Newest.IsZero() {
		age = format.Age(now.Sub(g.Newest))
	}
	errW := m.width - 2 - 6 - c.age - c.origin - 3
	return " " + mark + padLeft(fitCount(int64(len(g.Indices)), 6), 6) + " " +
		pad(age, c.age) + " " +
		pad(origins, c.origin) + " " +
		pad(text, errW)
}

func (m *messagesScreen) selMark(styled bool) string {
	if styled {
		return m.c.styles.Selected.Render("●")
	}
	return "●"
}

func (m *messagesScreen) ShortHelp() []key.Binding {
	k := m.c.keys
	if m.typing {
		return []key.Binding{k.Open, k.Back}
	}
	// Most used first: the help bar cuts what does not fit (80 columns
	// show up to q quit); ? lists everything.
	if m.grouped {
		return []key.Binding{k.Open, k.Group, k.Select, k.replayShort(), k.Delete, k.Help, k.Quit, k.Export, k.Back}
	}
	return []key.Binding{k.Filter, k.Group, k.Select, k.replayShort(), k.Edit, k.Delete, k.Help, k.Quit, k.Export, k.Open, k.Back}
}

func (m *messagesScreen) FullHelp() [][]key.Binding {
	k := m.c.keys
	return [][]key.Binding{
		{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom},
		{k.Open, k.Back, described(k.Filter, "filter; /=EXPR on the broker side"), k.Sort, k.Reverse, described(k.Group, "group by error"), k.Refresh},
		{k.Select, k.SelectAll, k.ReplayOne, k.ReplayMany, described(k.Edit, "edit in $EDITOR, replay"), k.Delete, k.Export, k.Import},
		{k.Help, k.Jobs, k.Quit, k.ForceQuit},
	}
}

// infoLine says what the list shows.
func (m *messagesScreen) infoLine() string {
	st := m.c.styles
	var parts []string
	n := m.data.len()
	switch {
	case m.grouped:
		parts = append(parts, fmt.Sprintf("%d groups of %d messages", len(m.groups), n))
	case m.filter.Value() != "" || m.openGroup != "":
		parts = append(parts, fmt.Sprintf("%d of %d messages", len(m.rows), n))
	default:
		parts = append(parts, fmt.Sprintf("%d messages", n))
	}
	if !m.grouped {
		dir := "↑"
		if m.reverse {
			dir = "↓"
		}
		parts = append(parts, "sort: "+m.sort.String()+" "+dir)
	}
	if v := m.filter.Value(); v != "" && !m.typing {
		parts = append(parts, "filter: "+clean(v))
	}
	if m.expr != "" {
		parts = append(parts, st.Info.Render("expr: "+clean(m.expr)))
	}
	if m.selected.len() > 0 {
		parts = append(parts, st.Selected.Render(fmt.Sprintf("%d selected", m.selected.len())))
	}
	if m.live != nil && m.live.live && m.live.n == 0 {
		parts = append(parts, st.Dim.Render("live"))
	}
	if m.live != nil && m.live.n > 0 {
		text := fmt.Sprintf("%d new since opened (+)", m.live.n)
		if m.live.back > 0 {
			text += fmt.Sprintf(", %d came back from a replay", m.live.back)
		}
		if !m.reloadsForArrivals() {
			text += ", ctrl+r lists them"
		}
		parts = append(parts, st.Warning.Render(text))
	}
	switch {
	case m.loading && m.pending != nil:
		parts = append(parts, st.Info.Render(fmt.Sprintf("reloading… %d", m.pending.len())))
	case m.loading:
		parts = append(parts, st.Info.Render("loading…"))
	case m.stopped:
		parts = append(parts, st.Warning.Render("loading paused for the action"))
	case m.loadErr != nil:
		parts = append(parts, st.Error.Render("not loaded"))
	case m.loaded:
		parts = append(parts, st.Dim.Render("all given back, nothing held"))
	}
	return strings.Join(parts, st.Dim.Render(" · "))
}
