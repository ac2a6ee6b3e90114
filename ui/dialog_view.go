package ui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/parkinglot/parkinglot/replay"
	"github.com/parkinglot/parkinglot/ui/format"
)

// maxPlanRoutes bounds the destinations listed; the rest are counted.
const maxPlanRoutes = 5

// View is the dialog box; the root centres it over the body.
func (d *dialog) View() string {
	st := d.c.styles
	inner := d.width - 4
	var lines []string
	add := func(s ...string) { lines = append(lines, s...) }

	add(st.DialogTitle.Render(format.Cut(d.title(), inner)))
	add(st.Dim.Render(format.Cut(d.what+" in "+d.queue, inner)), "")
	switch d.state {
	case dlgPreparing:
		add("Opening the body in $EDITOR…", st.Dim.Render("save and quit the editor to continue; nothing is sent before you confirm"))
	case dlgConfirm:
		add(d.confirmLines(inner)...)
	case dlgRunning:
		add(d.progressLines()...)
		add(d.canaryLines()...)
	case dlgCanaryAsk:
		add(d.canaryLines()...)
	case dlgDone:
		add(d.doneLines(inner)...)
	}
	add("", d.c.helpView(d, inner, false))
	// Long warnings and errors wrap: they are what the dialog is for.
	var out []string
	for _, l := range lines {
		out = append(out, strings.Split(ansi.Wrap(l, inner, " /,"), "\n")...)
	}
	return st.Dialog.Width(d.width - 2).Render(strings.Join(out, "\n"))
}

func (d *dialog) title() string {
	switch d.kind {
	case actionEdit:
		return "Edit and replay"
	case actionDelete:
		return fmt.Sprintf("Delete %d message(s)", d.count())
	case actionExport:
		return fmt.Sprintf("Export %d message(s)", d.count())
	}
	return fmt.Sprintf("Replay %d message(s)", d.count())
}

func (d *dialog) confirmLines(inner int) []string {
	st := d.c.styles
	var lines []string
	switch d.kind {
	case actionDelete:
		lines = append(lines, st.Warning.Render("The messages are removed from the parking lot for good."),
			st.Dim.Render("Export them first (x) to keep a copy."))
	case actionExport:
		lines = append(lines, d.field(0, "File", d.path.View()),
			st.Dim.Render("JSON Lines, lossless; the messages stay in the queue."))
	default:
		lines = append(lines, d.planLines(inner)...)
		lines = append(lines, "", d.field(0, "Destination", d.dest.View()))
		if d.bulk {
			lines = append(lines, d.field(1, "Rate", d.rate.View()))
			if d.rateFrom != "" && strings.TrimSpace(d.rate.Value()) == d.rateFrom {
				lines = append(lines, st.Dim.Render("              from the config (parking_lots: rate)"))
			}
			if d.kind == actionReplay {
				lines = append(lines, d.canaryFieldLines()...)
			}
		}
		target := "origin (all queues bound to it)"
		if d.onlyQueue {
			target = "the failed queue alone (default exchange)"
		}
		lines = append(lines, st.Dim.Render("  Send to     ")+target+st.Dim.Render("  (ctrl+t)"))
	}
	if d.shared > 0 {
		lines = append(lines, st.Warning.Render(fmt.Sprintf("⚠ %d more row(s) share an id with a chosen message: one copy per id is acted on; run it again for the others", d.shared)))
	}
	if d.problem != "" {
		lines = append(lines, "", st.Error.Render("✗ "+d.problem))
	}
	return lines
}

// field is one labelled input; the focused one's label is highlighted.
func (d *dialog) field(i int, label, view string) string {
	// The marker shows the focus without colour (NO_COLOR).
	if i == d.focus {
		return d.c.styles.Focused.Render(fmt.Sprintf("› %-12s", label)) + view
	}
	return d.c.styles.Dim.Render(fmt.Sprintf("  %-12s", label)) + view
}

// planLines show exactly what a replay would do.
func (d *dialog) planLines(inner int) []string {
	st := d.c.styles
	switch {
	case d.planning:
		return []string{st.Dim.Render("Resolving the origin and the route…")}
	case d.planErr != nil:
		return []string{st.Error.Render("✗ " + clean(d.planErr.Error()))}
	case d.plan == nil:
		return nil
	}
	p := d.plan
	var lines []string
	for i, r := range p.Routes {
		if i == maxPlanRoutes {
			lines = append(lines, st.Dim.Render(fmt.Sprintf("… and %d more destinations", len(p.Routes)-i)))
			break
		}
		prefix := "→ "
		if len(p.Routes) > 1 || d.bulk {
			prefix = fmt.Sprintf("%d × → ", r.Messages)
		}
		dest := clean(r.Destination.String())
		switch {
		case !r.Known:
			why := "route unknown (management API unavailable)"
			if r.Problem != "" {
				why = r.Problem
			}
			lines = append(lines, prefix+dest+st.Dim.Render(" → "+clean(why)))
		case r.Unroutable() && r.Problem != "":
			lines = append(lines, prefix+dest+st.Error.Render(" → "+clean(r.Problem)+": it would stay parked"))
		case r.Unroutable():
			lines = append(lines, prefix+dest+st.Error.Render(" → reaches NO queue: the broker would return it and it stays parked"))
		default:
			lines = append(lines, prefix+dest+" → reaches "+st.Bold.Render(clean(strings.Join(r.Queues, ", "))))
		}
		if r.Source != "" {
			lines = append(lines, st.Dim.Render("  origin from "+clean(r.Source)))
		}
		if len(r.CCQueues) > 0 {
			lines = append(lines, st.Warning.Render(fmt.Sprintf("⚠ the CC/BCC header it keeps (%s) also reaches %s",
				clean(strings.Join(r.CC, ", ")), clean(strings.Join(r.CCQueues, ", ")))))
		}
		if others := otherQueues(r); len(others) > 0 {
			lines = append(lines, st.Warning.Render(fmt.Sprintf("⚠ also reaches %s: other consumers get a copy again — ctrl+t sends to %s alone",
				clean(strings.Join(others, ", ")), clean(strings.Join(r.FailedQueues, ", ")))))
		}
	}
	if len(p.Resets) > 0 {
		lines = append(lines, st.Dim.Render("resets "+format.Resets(p.Resets)))
	}
	if p.Unresolved > 0 {
		lines = append(lines, st.Warning.Render(fmt.Sprintf("⚠ %d message(s): cannot tell where they came from — type a destination", p.Unresolved)))
	}
	for _, w := range p.Warnings {
		lines = append(lines, st.Warning.Render("⚠ "+clean(w)))
	}
	return lines
}

// otherQueues are the queues a route reaches besides the one that failed.
func otherQueues(r PlannedRoute) []string {
	if len(r.FailedQueues) == 0 || !r.Known {
		return nil
	}
	var out []string
	for _, q := range r.Queues {
		if !contains(r.FailedQueues, q) {
			out = append(out, q)
		}
	}
	return out
}

func (d *dialog) progressLines() []string {
	st := d.c.styles
	total := max(d.ev.Total, d.count(), 1)
	pct := float64(d.ev.Done) / float64(total)
	lines := []string{
		d.bar.ViewAs(min(pct, 1)) + fmt.Sprintf("  %d/%d", d.ev.Done, total),
	}
	if d.ev.Kind == replay.EventFailed && d.ev.Err != "" {
		lines = append(lines, st.Warning.Render("last failure: "+clean(d.ev.Err)))
	}
	if d.cancelling {
		lines = append(lines, st.Warning.Render("Cancelling… messages already confirmed stay "+d.kind.verb()+"; the rest stay parked."))
	}
	return lines
}

func (d *dialog) doneLines(inner int) []string {
	st := d.c.styles
	text, kind := d.summary()
	style := st.Warning
	if kind == statusError {
		style = st.Error
	}
	lines := []string{style.Render(text)}
	if d.cn.up != nil && d.cn.up.Ended {
		lines = append(lines, d.canaryLines()...)
	}
	if len(d.result.Resets) > 0 {
		lines = append(lines, st.Dim.Render("reset "+format.Resets(d.result.Resets)))
	}
	for i, f := range d.result.Failures {
		if i == 8 {
			lines = append(lines, st.Dim.Render(fmt.Sprintf("… and %d more", d.result.Failed-i)))
			break
		}
		lines = append(lines, "  "+clean(f.ID)+": "+clean(f.Err))
	}
	if d.kind == actionEdit && d.draft != nil {
		lines = append(lines, "", st.Dim.Render("Nothing was sent. Your edit is kept: e opens it again, esc throws it away."))
	}
	return lines
}

// ShortHelp makes the dialog its own help bar.
func (d *dialog) ShortHelp() []key.Binding {
	k := d.c.keys
	switch d.state {
	case dlgPreparing:
		return []key.Binding{k.Cancel}
	case dlgRunning:
		return []key.Binding{k.CancelRun, k.Background}
	case dlgCanaryAsk:
		next := "replay the rest"
		if d.cn.up != nil {
			next = d.cn.nextText(d.cn.up.Step.Step)
		}
		return []key.Binding{described(k.CanaryGo, next), k.CanaryStop, k.Background}
	case dlgDone:
		if d.kind == actionEdit && d.draft != nil {
			return []key.Binding{k.EditAgain, k.Discard}
		}
		return []key.Binding{k.Close}
	}
	bs := []key.Binding{k.Confirm, k.Cancel}
	if len(d.fields()) > 1 {
		bs = append(bs, k.NextField, k.PrevField)
	}
	if d.usesPlan() {
		bs = append(bs, described(k.ToggleTarget, "target"))
	}
	return bs
}

// FullHelp is the short help in one column.
func (d *dialog) FullHelp() [][]key.Binding { return [][]key.Binding{d.ShortHelp()} }

// place centres the dialog in the body.
func (d *dialog) place(width, height int) string {
	return lipgloss.Place(width, height, lipgloss.Center, lipgloss.Center, d.View())
}
