package ui

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/charmbracelet/bubbles/key"

	"github.com/parkinglot/parkinglot/ui/format"
)

// searchColumns are the results' widths for one terminal width: the
// queue and the id as wide as the widest kept (within bounds), the error
// what is left.
func (s *searchScreen) searchColumns() (queue, id, age, errW int) {
	w := s.width - 2 // the cursor mark and a space
	age = 6
	queue = min(max(s.qWidth, len("QUEUE")), 32, max(w/3, 12))
	id = min(max(s.idWidth, 8), 24)
	errW = max(w-queue-id-age-3, 8)
	return queue, id, age, errW
}

func (s *searchScreen) View() string {
	st := s.c.styles
	var b strings.Builder
	for _, l := range s.headLines() {
		b.WriteString(format.Cut(l, s.width))
		b.WriteString("\n")
	}
	cq, cid, cage, cerr := s.searchColumns()
	b.WriteString(st.Header.Render(pad("  "+pad("QUEUE", cq)+" "+pad("ID", cid)+" "+pad("AGE", cage)+" ERROR", s.width)))
	b.WriteString("\n")
	now := s.c.now()
	s.list.draw(&b, st, s.emptyText(), func(i int, _ bool) string {
		m := s.matches[i]
		errText := clean(format.OneLine(m.Summary.Facts.Error))
		if errText == "" {
			errText = "–"
		}
		return "  " + pad(clean(m.Queue), cq) + " " + pad(clean(m.Summary.ID), cid) + " " +
			pad(format.Age(m.Summary.Age(now)), cage) + " " + pad(errText, cerr)
	})
	return strings.TrimSuffix(b.String(), "\n")
}

func (s *searchScreen) emptyText() string {
	switch {
	case s.running:
		return "  Searching…"
	case s.res == nil && s.err != nil:
		return "  " + clean(s.err.Error()) + " — ctrl+r to try again"
	default:
		return "  No message matches."
	}
}

// queryLine says what is searched for, and how it is read.
func (s *searchScreen) queryLine() string {
	if s.query.Text != "" {
		return "text " + strconv.Quote(clean(s.query.Text)) + " in ids, errors and bodies of every parking lot"
	}
	return s.c.styles.Info.Render("expr: "+clean(s.query.Filter)) + " on every parking lot's messages"
}

// headLines are the lines above the results: what is searched for, how
// far the search is, and the cap once matches were left out.
func (s *searchScreen) headLines() []string {
	lines := []string{s.queryLine(), s.infoLine()}
	if left := s.matched - len(s.matches); left > 0 {
		lines = append(lines, s.c.styles.Warning.Render(fmt.Sprintf("showing the first %d: %d more left out (the cap is %d)", len(s.matches), left, s.c.searchCap())))
	}
	return lines
}

// infoLine says how far the search is, and what it found: "N matches in
// M of T parking lots, K messages looked at".
func (s *searchScreen) infoLine() string {
	st := s.c.styles
	switch {
	case s.running && s.stopped:
		return st.Info.Render("stopping the search…")
	case s.running:
		return st.Info.Render(fmt.Sprintf("searching %s (parking lot %d)… %s so far", clean(s.queue), s.begun, plural(s.matched, "match", "matches")))
	case s.res == nil:
		return st.Error.Render("not searched")
	}
	scanned, in := 0, 0
	for _, qs := range s.res.Queues {
		scanned += qs.Scanned
		if qs.Matched > 0 {
			in++
		}
	}
	line := fmt.Sprintf("%s in %d of %d parking lot(s), %s looked at, all given back",
		plural(s.matched, "match", "matches"), in, len(s.res.Queues), plural(scanned, "message", "messages"))
	if s.stopped {
		return st.Warning.Render("stopped (ctrl+r searches again): " + line)
	}
	return line
}

// plural is "1 match", "2 matches".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

func (s *searchScreen) ShortHelp() []key.Binding {
	k := s.c.keys
	// What fits in 80 columns first, up to q quit; ? lists everything.
	return []key.Binding{described(k.Open, "open in its queue"), described(k.Refresh, "search again"), k.Back, k.Help, k.Quit, k.Up, k.Down}
}

func (s *searchScreen) FullHelp() [][]key.Binding {
	k := s.c.keys
	return [][]key.Binding{
		{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom},
		{described(k.Open, "open the message in its queue"), described(k.Refresh, "search again"), k.Back},
		{k.Help, k.Quit, k.ForceQuit},
	}
}
