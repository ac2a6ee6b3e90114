package ui

import (
	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/table"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
)

// Styles is every style the TUI draws with, built once from a renderer so
// that the renderer's colour profile decides: NO_COLOR (or a terminal
// without colours) gives the Ascii profile, and every colour below
// disappears while bold, reverse and the text markers stay.
type Styles struct {
	Profile termenv.Profile

	Title     lipgloss.Style // the breadcrumb line
	Crumb     lipgloss.Style // a breadcrumb part that is not the current screen
	Header    lipgloss.Style // column headers
	Cursor    lipgloss.Style // the row under the cursor
	Selected  lipgloss.Style // a selected row's marker
	Dim       lipgloss.Style
	Bold      lipgloss.Style
	Error     lipgloss.Style
	Warning   lipgloss.Style
	OK        lipgloss.Style
	Info      lipgloss.Style
	Parking   lipgloss.Style // the parking-lot marker on the queues screen
	Label     lipgloss.Style // a property or header name
	Important lipgloss.Style // x-last-error and x-retry-count values

	StatusBar   lipgloss.Style
	StatusConn  lipgloss.Style
	StatusDepth lipgloss.Style

	Dialog      lipgloss.Style
	DialogTitle lipgloss.Style
	Focused     lipgloss.Style // the focused field's label
	// ProgressFill is the progress bar's colour (bubbles' progress takes a
	// colour, not a style), from the same palette as the rest.
	ProgressFill string

	JSONKey, JSONString, JSONNumber, JSONLiteral, JSONPunct lipgloss.Style

	Help  help.Styles
	Table table.Styles
}

// NewStyles builds the style sheet for r (lipgloss.DefaultRenderer() for
// the program's terminal).
func NewStyles(r *lipgloss.Renderer) *Styles {
	c := func(light, dark string) lipgloss.AdaptiveColor {
		return lipgloss.AdaptiveColor{Light: light, Dark: dark}
	}
	accent := c("#5A3FD6", "#9D8CFF")
	subtle := c("#8A8A8A", "#7A7A7A")
	red := c("#C0262D", "#FF6B6B")
	yellow := c("#9A6700", "#F0C05A")
	green := c("#1A7F37", "#5FD68A")
	cyan := c("#0E7490", "#67D6E8")
	ns := r.NewStyle

	s := &Styles{
		// One colour for both backgrounds: the accent's dark value reads
		// on either, and asking the terminal for its background here would
		// query it before the program owns it.
		ProgressFill: accent.Dark,
		Profile:      r.ColorProfile(),
		Title:        ns().Bold(true).Foreground(accent),
		Crumb:        ns().Foreground(subtle),
		Header:       ns().Bold(true).Underline(true),
		Cursor:       ns().Reverse(true),
		Selected:     ns().Bold(true).Foreground(yellow),
		Dim:          ns().Foreground(subtle),
		Bold:         ns().Bold(true),
		Error:        ns().Bold(true).Foreground(red),
		Warning:      ns().Foreground(yellow),
		OK:           ns().Foreground(green),
		Info:         ns().Foreground(cyan),
		Parking:      ns().Bold(true).Foreground(yellow),
		Label:        ns().Foreground(cyan),
		Important:    ns().Bold(true).Foreground(red),

		StatusBar:   ns().Reverse(true),
		StatusConn:  ns().Reverse(true),
		StatusDepth: ns().Reverse(true).Bold(true),

		Dialog:      ns().Border(lipgloss.RoundedBorder()).BorderForeground(accent).Padding(0, 1),
		DialogTitle: ns().Bold(true).Foreground(accent),
		Focused:     ns().Bold(true).Foreground(accent),

		JSONKey:     ns().Foreground(cyan),
		JSONString:  ns().Foreground(green),
		JSONNumber:  ns().Foreground(yellow),
		JSONLiteral: ns().Foreground(accent),
		JSONPunct:   ns().Foreground(subtle),
	}
	key := ns().Bold(true)
	desc := ns().Foreground(subtle)
	sep := ns().Foreground(subtle)
	s.Help = help.Styles{
		Ellipsis: sep, ShortKey: key, ShortDesc: desc, ShortSeparator: sep,
		FullKey: key, FullDesc: desc, FullSeparator: sep,
	}
	s.Table = table.Styles{
		Header:   ns().Bold(true).Underline(true).Padding(0, 1, 0, 0),
		Cell:     ns().Padding(0, 1, 0, 0),
		Selected: ns().Reverse(true),
	}
	return s
}
