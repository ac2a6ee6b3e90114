package ui

import (
	"context"
	"errors"
	"fmt"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/parkinglot/parkinglot/ui/iostreams"
)

// ErrNoTerminal: the TUI was asked for without a terminal to draw on.
var ErrNoTerminal = errors.New("the TUI needs a terminal; for scripts use `parkinglot list`, `show` and `replay`")

// RunOptions are Run's options and streams (the process's when nil).
type RunOptions struct {
	Options
	// Streams: drawn on Out when it is a terminal, otherwise on ErrOut when
	// that one is (stdout stays clean for pipes).
	Streams *iostreams.IOStreams
}

// Run shows the TUI in the alternate screen until the user quits or ctx
// ends, then waits until every worker gave its held messages back.
func Run(ctx context.Context, b Backend, opts RunOptions) error {
	io := opts.Streams
	if io == nil {
		io = iostreams.System()
	}
	in, out := io.In, io.Out
	if !io.OutIsTerminal() {
		if !io.ErrIsTerminal() {
			return ErrNoTerminal
		}
		out = io.ErrOut
	}
	if !io.InIsTerminal() {
		return ErrNoTerminal
	}
	if opts.Renderer == nil {
		// Colours follow the terminal drawn on, and NO_COLOR.
		opts.Renderer = lipgloss.NewRenderer(out)
	}
	m := New(ctx, b, opts.Options)
	p := tea.NewProgram(m, tea.WithAltScreen(), tea.WithContext(ctx), tea.WithInput(in), tea.WithOutput(out))
	_, err := p.Run()
	closeErr := m.Close()
	// The jobs' outcomes stay on the terminal once the TUI is gone.
	for _, line := range m.JobSummaries() {
		_, _ = fmt.Fprintln(io.ErrOut, "parkinglot: job: "+line)
	}
	if errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil {
		err = nil // interrupted or terminated: a normal way to leave
	}
	return errors.Join(err, closeErr)
}
