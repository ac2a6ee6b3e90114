// Package iostreams holds the standard streams a command or the TUI talks
// through, and the one check for whether a person is at a terminal.
package iostreams

import (
	"bytes"
	"io"
	"os"

	"golang.org/x/term"
)

// IOStreams are a command's input and outputs, and whether they are a
// terminal. Commands read and write only through them, so tests can give
// buffers and say "this is a terminal" without one.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer

	inTTY, outTTY, errTTY bool
	width                 func() int
}

// System is the process's standard streams.
func System() *IOStreams {
	return New(os.Stdin, os.Stdout, os.Stderr)
}

// New wraps the given streams, asking each whether it is a terminal.
func New(in io.Reader, out, errOut io.Writer) *IOStreams {
	s := &IOStreams{In: in, Out: out, ErrOut: errOut,
		inTTY: IsTerminal(in), outTTY: IsTerminal(out), errTTY: IsTerminal(errOut)}
	s.width = func() int {
		if f, ok := out.(interface{ Fd() uintptr }); ok && s.outTTY {
			if w, _, err := term.GetSize(int(f.Fd())); err == nil {
				return w
			}
		}
		return 0
	}
	return s
}

// Test is streams of buffers, not a terminal until SetTerminal says so.
func Test() (s *IOStreams, in, out, errOut *bytes.Buffer) {
	in, out, errOut = &bytes.Buffer{}, &bytes.Buffer{}, &bytes.Buffer{}
	s = &IOStreams{In: in, Out: out, ErrOut: errOut, width: func() int { return 0 }}
	return s, in, out, errOut
}

// SetTerminal makes the streams claim (or deny) to be a terminal of width
// columns (0: unknown), for tests.
func (s *IOStreams) SetTerminal(tty bool, width int) {
	s.inTTY, s.outTTY, s.errTTY = tty, tty, tty
	s.width = func() int { return width }
}

// IsTerminal reports whether a person is there: input and output are a
// terminal. Scripts and pipes get no prompts, no progress line and no TUI.
func (s *IOStreams) IsTerminal() bool { return s.inTTY && s.outTTY }

// InIsTerminal reports whether the input is a terminal.
func (s *IOStreams) InIsTerminal() bool { return s.inTTY }

// OutIsTerminal reports whether the output is a terminal.
func (s *IOStreams) OutIsTerminal() bool { return s.outTTY }

// ErrIsTerminal reports whether the error output is a terminal.
func (s *IOStreams) ErrIsTerminal() bool { return s.errTTY }

// Width is the output terminal's width in columns, or 0 when it is not a
// terminal (tables then use their default).
func (s *IOStreams) Width() int {
	if !s.IsTerminal() || s.width == nil {
		return 0
	}
	return s.width()
}

// IsTerminal reports whether v is a file on a terminal. It is the one
// terminal check: everything else asks an IOStreams.
func IsTerminal(v any) bool {
	f, ok := v.(interface{ Fd() uintptr })
	return ok && term.IsTerminal(int(f.Fd()))
}
