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

// View is the dialog box; the root centres it over the body.
func (d *dialog) View() string {
	st := d.c.styles
	inner := d.width - 4
	var lines []string
	add := func(s ...string) { lines = append(lines, s...) }

	add(st.DialogTitle.Render(format.Cut(d.act.title(d.count()), inner)))
	add(st.Dim.Render(format.Cut(d.what+" in "+d.queue, inner)), "")
	add(d.act.lines(d, inner)...)
	if d.state == dlgConfirm {
		add(d.confirmNotes()...)
	}
	add("", d.c.helpView(d, inner, false))
	// Long warnings and errors wrap: they are what the dialog is for.
	var out []string
	for _, l := range lines {
		out = append(out, strings.Split(ansi.Wrap(l, inner, " /,"), "\n")...)
	}
	return st.Dialog.Width(d.width - 2).Render(strings.Join(out, "\n"))
}

// confirmNotes follow every action's confirm lines: the copies counted
// beyond the rows chosen, and why enter did not start.
func (d *dialog) confirmNotes() []string {
	st := d.c.styles
	var lines []string
	if d.copies > 0 {
		lines = append(lines, st.Warning.Render(fmt.Sprintf("⚠ %d more message(s) carry the id of a chosen one (parked twice): an id takes every copy, so they are counted and go too", d.copies)))
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

// runLines are what a running or finished action shows, when the action
// adds nothing.
func (d *dialog) runLines() []string {
	switch d.state {
	case dlgRunning:
		return d.progressLines()
	case dlgDone:
		return append([]string{d.summaryLine()}, d.outcomeLines()...)
	}
	return nil
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
		lines = append(lines, st.Warning.Render("Cancelling… messages already confirmed stay "+d.act.verb()+"; the rest stay parked."))
	}
	return lines
}

// summaryLine is the outcome in one line, as the status bar says it.
func (d *dialog) summaryLine() string {
	st := d.c.styles
	text, kind := d.summary()
	style := st.Warning
	if kind == statusError {
		style = st.Error
	}
	return style.Render(text)
}

// outcomeLines are the resets and the failures with their errors.
func (d *dialog) outcomeLines() []string {
	st := d.c.styles
	var lines []string
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
	return lines
}

// ShortHelp makes the dialog its own help bar.
func (d *dialog) ShortHelp() []key.Binding {
	if bs := d.act.help(d); bs != nil {
		return bs
	}
	k := d.c.keys
	switch d.state {
	case dlgRunning:
		return []key.Binding{k.CancelRun, k.Background}
	case dlgDone:
		return []key.Binding{k.Close}
	}
	return d.confirmHelp()
}

// confirmHelp is the confirm state's keys.
func (d *dialog) confirmHelp() []key.Binding {
	k := d.c.keys
	bs := []key.Binding{k.Confirm, k.Cancel}
	if len(d.act.fields()) > 1 {
		bs = append(bs, k.NextField, k.PrevField)
	}
	return bs
}

// FullHelp is the short help in one column.
func (d *dialog) FullHelp() [][]key.Binding { return [][]key.Binding{d.ShortHelp()} }

// place centres the dialog in the body.
func (d *dialog) place(width, height int) string {
	return lipgloss.Place(width, height, lipgloss.Center, lipgloss.Center, d.View())
}
