package cli

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/parkinglot/parkinglot/replay"
	"github.com/parkinglot/parkinglot/ui/format"
)

// FormatOrigin is "exchange → routing key" ("(default) → q" for the
// default exchange), or "?" when the origin cannot be told.
func FormatOrigin(s replay.Summary) string {
	if s.Origin == nil {
		return "?"
	}
	return format.Destination(s.Origin.Destination)
}

// SummaryTable prints summaries as rows of fixed-width columns, so a long
// list can be printed batch by batch as it arrives.
type SummaryTable struct {
	W io.Writer
	// Width is what a row may take (Factory.tableWidth): the ORIGIN and
	// ERROR columns are cut to fit; 0 cuts nothing.
	Width int
	Now   time.Time
	head  bool
	idW   int // the ID column's width, set by the first batch (idColumn)
}

const (
	colAge      = 7
	colAttempts = 8
	colBack     = 7 // "2 other" (format.CameBackShort)
	colOrigin   = 36
	// colID is the narrowest ID column: a UUID, the longest common
	// message_id, fits it.
	colID = 36
)

// idColumn is the width of an ID column whose first rows hold ids: colID,
// or the widest of them. An id is never cut (it is pasted into show and
// --id); one wider than the column still comes whole and its row's error
// gives up the cells, so the line keeps its width.
func idColumn(ids ...string) int {
	w := colID
	for _, id := range ids {
		w = max(w, fmtWidth(id))
	}
	return w
}

// defaultWidth is a terminal's width when it cannot be read.
const defaultWidth = 120

// tableWidth is how wide a row of list, search or a removal's preview may
// be, 0 for no limit. --no-trunc cuts nothing; else COLUMNS when set (read
// first, as git and ls do), else the terminal's width. Piped, nothing is
// cut, so that `| grep` sees every error whole.
func (f *Factory) tableWidth(noTrunc bool) int {
	if noTrunc {
		return 0
	}
	if n, err := strconv.Atoi(strings.TrimSpace(f.Getenv("COLUMNS"))); err == nil && n > 0 {
		return n
	}
	if !f.IOStreams.OutIsTerminal() {
		return 0
	}
	if w := f.IOStreams.Width(); w > 0 {
		return w
	}
	return defaultWidth
}

// noTruncFlag is --no-trunc, for every command whose table cuts columns.
func noTruncFlag(cmd *cobra.Command, v *bool) {
	cmd.Flags().BoolVar(v, "no-trunc", false, "cut no column to the terminal's width (piped output is cut only when COLUMNS is set)")
}

// fmtWidth is how wide fmt's %-*s counts s: in runes.
func fmtWidth(s string) int { return utf8.RuneCountInString(s) }

// Write prints the header (once) and the rows.
func (t *SummaryTable) Write(sums []replay.Summary) error {
	if !t.head {
		t.head = true
		ids := make([]string, len(sums))
		for i, s := range sums {
			ids[i] = format.Name(s.ID)
		}
		t.idW = idColumn(ids...)
		if _, err := fmt.Fprintf(t.W, "%-*s %-*s %*s %-*s %-*s %s\n", t.idW, "ID", colAge, "AGE", colAttempts, "ATTEMPTS", colBack, "BACK", colOrigin, "ORIGIN", "ERROR"); err != nil {
			return err
		}
	}
	now := t.Now
	if now.IsZero() {
		now = time.Now()
	}
	var b strings.Builder
	for _, s := range sums {
		id := format.Name(s.ID)
		origin, errText := FormatOrigin(s), format.OneLine(s.Facts.Error)
		if t.Width > 0 {
			errW := max(t.Width-max(fmtWidth(id), t.idW)-colAge-colAttempts-colBack-colOrigin-5, 20)
			origin, errText = format.Cut(origin, colOrigin), format.Cut(errText, errW)
		}
		fmt.Fprintf(&b, "%-*s %-*s %*d %-*s %-*s %s\n",
			t.idW, id, colAge, format.Age(s.Age(now)), colAttempts, s.Facts.Attempts,
			colBack, format.CameBackShort(s.Facts), colOrigin, origin, errText)
	}
	_, err := io.WriteString(t.W, b.String())
	return err
}

// WritePlan prints what a replay would do: a route line per destination
// with its warning, then up to maxItems messages, the refused ones and the
// ids not found.
func WritePlan(w io.Writer, p replay.Plan, maxItems int) error {
	var b strings.Builder
	chosen := max(p.Chosen, len(p.Items)) // PlanEach keeps only the first items
	fmt.Fprintf(&b, "%d message(s) in %s to replay", chosen, p.Queue)
	refused := max(p.RefusedCount, len(p.Refused)) // PlanEach keeps only the first refusals
	if refused > 0 {
		fmt.Fprintf(&b, ", %d refused", refused)
	}
	b.WriteString("\n")
	for _, r := range p.Routes {
		fmt.Fprintf(&b, "  %d %s\n", r.Messages, format.RouteLine(r))
		if r.Warning != "" {
			fmt.Fprintf(&b, "    warning: %s\n", r.Warning)
		}
	}
	if len(p.Resets) > 0 {
		fmt.Fprintf(&b, "  resets: %s\n", format.Resets(p.Resets))
	}
	listUpTo(&b, len(p.Items), chosen, maxItems, "", func(i int) string {
		it := p.Items[i]
		return fmt.Sprintf("%s → %s  (%s)", format.Name(it.ID), format.Destination(it.Destination), it.Source)
	})
	listUpTo(&b, len(p.Refused), refused, maxItems, " refused", func(i int) string {
		return fmt.Sprintf("refused %s: %s", format.Name(p.Refused[i].ID), format.OneLine(p.Refused[i].Err))
	})
	missing := max(p.MissingCount, len(p.Missing)) // PlanEach keeps only the first
	listUpTo(&b, len(p.Missing), missing, maxItems, " not found", func(i int) string {
		return "not found: " + format.Name(p.Missing[i])
	})
	for _, n := range format.Notes(p.Notes) {
		fmt.Fprintf(&b, "  note: %s\n", n)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// listUpTo writes line(i) for the first of the n values kept (at most
// maxItems, all when it is 0), then how many of all total were not shown.
func listUpTo(b *strings.Builder, n, total, maxItems int, what string, line func(i int) string) {
	if maxItems > 0 {
		n = min(n, maxItems)
	}
	for i := range n {
		fmt.Fprintf(b, "  %s\n", line(i))
	}
	if total > n {
		fmt.Fprintf(b, "  … and %d more%s\n", total-n, what)
	}
}

// WriteResult prints the outcome of a run: a count line, then one line per
// message not done (id and reason), then notes.
func WriteResult(w io.Writer, verb string, r replay.Result) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %d message(s)", verb, r.Done)
	if r.Failed > 0 {
		fmt.Fprintf(&b, ", %d not done", r.Failed)
	}
	if r.Skipped > 0 {
		fmt.Fprintf(&b, ", %d skipped", r.Skipped)
	}
	if r.NotSent > 0 {
		fmt.Fprintf(&b, ", %d not sent (the run stopped first; still where they were)", r.NotSent)
	}
	b.WriteString("\n")
	if len(r.Resets) > 0 {
		fmt.Fprintf(&b, "reset: %s\n", format.Resets(r.Resets))
	}
	for _, f := range r.Failures {
		fmt.Fprintf(&b, "not done: %s: %s\n", format.Name(f.ID), format.OneLine(f.Err))
	}
	if r.Failed > len(r.Failures) {
		fmt.Fprintf(&b, "… and %d more not done (-o json reports each as it happens)\n", r.Failed-len(r.Failures))
	}
	for _, n := range resultNotes(r) {
		fmt.Fprintf(&b, "note: %s\n", n)
	}
	if r.Run != "" && r.Done > 0 {
		fmt.Fprintf(&b, "run %s (parkinglot replay --status %s tells how many came back)\n", r.Run, r.Run)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// ProgressLine is the one-line progress a terminal shows (carriage-return
// updated) from an event.
func ProgressLine(verb string, e replay.Event) string {
	line := fmt.Sprintf("%s %d/%d", verb, e.Done, e.Total)
	if e.Kind == replay.EventRateLimit {
		line += " (rate limited)"
	}
	return line
}

// WriteImportPlan prints an import plan.
func WriteImportPlan(w io.Writer, p replay.ImportPlan) error {
	if _, err := fmt.Fprintf(w, "%d message(s) in %s to publish\n", p.Messages, p.File); err != nil {
		return err
	}
	for _, d := range p.Destinations {
		if _, err := fmt.Fprintf(w, "  %d → %s\n", d.Messages, d.Destination); err != nil {
			return err
		}
	}
	return nil
}
