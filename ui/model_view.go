package ui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/parkinglot/parkinglot/ui/format"
)

// View draws the title line, the body (the top screen, the dialog over it,
// or the full help), the status bar, the status message and the help bar.
func (m *Model) View() string {
	var body string
	switch {
	case m.fullHelp:
		body = m.fullHelpView()
	case m.dialog != nil:
		body = m.dialog.place(m.c.width, m.c.height)
	default:
		body = m.top().View()
	}
	body = fitHeight(body, m.c.height, m.c.width)

	var helpKeys help.KeyMap = m.top()
	if m.dialog != nil {
		helpKeys = m.dialog
	}
	if m.quitAsk {
		helpKeys = keyHelp{short: []key.Binding{m.c.keys.QuitYes, m.c.keys.QuitNo}}
	}
	if m.fullHelp {
		helpKeys = keyHelp{short: []key.Binding{m.c.keys.Help, m.c.keys.Back}}
	}
	return strings.Join([]string{
		m.titleLine(),
		body,
		m.statusBar(),
		m.statusLine(),
		format.Cut(m.c.helpView(helpKeys, m.width, false), m.width),
	}, "\n")
}

// titleLine is the breadcrumb of the navigation stack.
func (m *Model) titleLine() string {
	st := m.c.styles
	parts := make([]string, 0, len(m.stack)+1)
	parts = append(parts, st.Title.Render("parkinglot"))
	for i, s := range m.stack {
		if i == len(m.stack)-1 {
			parts = append(parts, st.Bold.Render(s.Title()))
		} else {
			// Earlier crumbs are cut so that the current one shows.
			parts = append(parts, st.Crumb.Render(format.Cut(s.Title(), 32)))
		}
	}
	return format.Cut(strings.Join(parts, st.Crumb.Render(" › ")), m.width)
}

// statusBar always shows the connection (on a cluster, the node it is on
// and the URL in use, once known) and the current queue's depth.
func (m *Model) statusBar() string {
	st := m.c.styles
	left := " " + m.connDescribe()
	if jobs := m.jobsLine(); jobs != "" {
		left = " " + jobs + " ·" + left // first: the connection may be cut
	}
	right := ""
	if q := m.top().Queue(); q != "" {
		right = clean(q) + ": " + m.depth(q) + " "
	}
	space := m.width - lipgloss.Width(left) - lipgloss.Width(right)
	if space < 1 {
		left = format.Cut(left, max(m.width-lipgloss.Width(right)-1, 0))
		space = max(m.width-lipgloss.Width(left)-lipgloss.Width(right), 0)
	}
	line := st.StatusConn.Render(left) + st.StatusBar.Render(strings.Repeat(" ", space)) + st.StatusDepth.Render(right)
	return format.Cut(line, m.width)
}

// depth is the queue's message count from the last refresh.
func (m *Model) depth(queue string) string {
	if c, ok := m.counted[queue]; ok && m.c.now().Sub(c.at) < statsLag {
		return fmtCount(int64(c.n)) + " messages"
	}
	for _, r := range m.queues {
		if r.Name == queue {
			s := fmtCount(r.Messages) + " messages"
			if r.MessagesUnacknowledged > 0 {
				s += " (" + fmtCount(r.MessagesUnacknowledged) + " unacked)"
			}
			return s
		}
	}
	if m.queuesErr != nil {
		return "depth unknown"
	}
	return "…"
}

// statusLine is what was done last, or the last error.
func (m *Model) statusLine() string {
	st := m.c.styles
	if m.quitAsk {
		return format.Cut(st.Warning.Render(fmt.Sprintf("⚠ %d job(s) running — y: quit and stop them (every message is done or still parked) · n: stay", m.activeJobs())), m.width)
	}
	if m.quitting {
		return format.Cut(st.Warning.Render("stopping the jobs before quitting…"), m.width)
	}
	text := m.status
	style := st.Info
	switch m.kind {
	case statusOK:
		style, text = st.OK, "✓ "+text
	case statusWarn:
		style, text = st.Warning, "⚠ "+text
	case statusError:
		style, text = st.Error, "✗ "+text
	}
	if m.status == "" {
		if m.queuesErr != nil {
			return format.Cut(st.Warning.Render("⚠ queues: "+clean(m.queuesErr.Error())), m.width)
		}
		return st.Dim.Render(format.Cut("Browsing gives every message back at once: nothing is held between actions.", m.width))
	}
	return format.Cut(style.Render(clean(text)), m.width)
}

// helpGap separates the full help's columns.
const helpGap = "    "

// fullHelpView is the full help as the body shows it: a page of
// fullHelpLines from helpTop, with a last line saying what is below.
func (m *Model) fullHelpView() string {
	lines := m.fullHelpLines()
	h := m.c.height
	if len(lines) <= h {
		return strings.Join(lines, "\n")
	}
	top := min(max(m.helpTop, 0), len(lines)-(h-1))
	end := top + h - 1
	more := fmt.Sprintf("… %d more line(s): ↓/pgdn", len(lines)-end)
	if end == len(lines) {
		more = "↑/pgup: the lines above"
	}
	return strings.Join(append(lines[top:end:end], m.c.styles.Dim.Render(more)), "\n")
}

// scrollHelp moves the full help by the navigation key msg, if it is
// one: a short terminal shows it a page at a time.
func (m *Model) scrollHelp(msg tea.KeyMsg) {
	k := m.c.keys
	page := max(m.c.height-1, 1)
	switch {
	case key.Matches(msg, k.Up):
		m.helpTop--
	case key.Matches(msg, k.Down):
		m.helpTop++
	case key.Matches(msg, k.PageUp):
		m.helpTop -= page
	case key.Matches(msg, k.PageDown):
		m.helpTop += page
	case key.Matches(msg, k.Top):
		m.helpTop = 0
	case key.Matches(msg, k.Bottom):
		m.helpTop = len(m.fullHelpLines())
	}
	m.helpTop = min(max(m.helpTop, 0), max(len(m.fullHelpLines())-page, 0))
}

// fullHelpLines are every key of the screen on top with what it does,
// none cut: the columns side by side as far as the width goes, the rest
// in rows below.
func (m *Model) fullHelpLines() []string {
	st := m.c.styles
	var rows [][]string
	var row []string
	width := 0
	for _, g := range m.top().FullHelp() {
		col := m.c.helpView(keyHelp{full: [][]key.Binding{g}}, 0, true)
		if col == "" {
			continue
		}
		w := lipgloss.Width(col)
		if len(row) > 0 && width+len(helpGap)+w > m.c.width {
			rows, row, width = append(rows, row), nil, 0
		}
		if len(row) > 0 {
			row, width = append(row, helpGap), width+len(helpGap)
		}
		row, width = append(row, col), width+w
	}
	if len(row) > 0 {
		rows = append(rows, row)
	}
	lines := []string{st.Title.Render("Keys") + st.Dim.Render(" — "+m.top().Title())}
	for _, r := range rows {
		lines = append(lines, "")
		lines = append(lines, strings.Split(lipgloss.JoinHorizontal(lipgloss.Top, r...), "\n")...)
	}
	lines = append(lines, "")
	for _, note := range []string{
		"Every action opens a dialog that says what will happen; nothing changes before you confirm.",
		"Browsing holds messages only while it reads them, then gives them all back.",
	} {
		for _, l := range strings.Split(ansi.Wordwrap(note, m.c.width, ""), "\n") {
			lines = append(lines, st.Dim.Render(l))
		}
	}
	return lines
}

// fitHeight pads or cuts s to exactly height lines of at most width
// cells, so the bars below never move.
func fitHeight(s string, height, width int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > height {
		lines = lines[:height]
	}
	for i, l := range lines {
		lines[i] = format.Cut(l, width)
	}
	for len(lines) < height {
		lines = append(lines, "")
	}
	return strings.Join(lines, "\n")
}
