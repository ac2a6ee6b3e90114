package ui

import (
	"context"
	"errors"
	"io"
	"os"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"golang.org/x/term"
)

// ErrNoTerminal: the TUI was asked for without a terminal to draw on.
var ErrNoTerminal = errors.New("the TUI needs a terminal; for scripts use `parkinglot list`, `show` and `replay`")

// RunOptions are Run's streams (the process's when nil).
type RunOptions struct {
	Options
	Input  io.Reader
	Output io.Writer // drawn on when it is a terminal…
	Errors io.Writer // …otherwise here when this one is (stdout stays clean for pipes)
}

// Run shows the TUI in the alternate screen until the user quits or ctx
// ends, then waits until every worker gave its held messages back.
func Run(ctx context.Context, b Backend, opts RunOptions) error {
	in, out := opts.Input, opts.Output
	if in == nil {
		in = os.Stdin
	}
	if out == nil {
		out = os.Stdout
	}
	errOut := opts.Errors
	if errOut == nil {
		errOut = os.Stderr
	}
	if !isTTY(out) {
		if !isTTY(errOut) {
			return ErrNoTerminal
		}
		out = errOut
	}
	if !isTTY(in) {
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
	if errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil {
		err = nil // interrupted or terminated: a normal way to leave
	}
	return errors.Join(err, closeErr)
}

func isTTY(f any) bool {
	fd, ok := f.(interface{ Fd() uintptr })
	return ok && term.IsTerminal(int(fd.Fd()))
}
