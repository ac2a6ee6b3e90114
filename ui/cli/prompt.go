package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/parkinglot/parkinglot/replay"
)

// confirm asks "proceed? [y/N]" on a terminal and returns nil only for a
// "y". Without a terminal (and without --yes, which callers check first),
// a "no", an empty answer, end of input or Ctrl-C, it returns an error that
// exits 2 having changed nothing: callers must act only on nil.
func confirm(ctx context.Context, f *Factory) error {
	io := f.IOStreams
	if !io.IsTerminal() {
		return needsYes()
	}
	ok, err := Confirm(ctx, io.In, io.Out, "proceed? [y/N] ")
	if err != nil {
		return err
	}
	if !ok {
		return replay.ErrDeclined
	}
	return nil
}

// needsYes is the refusal to act without a terminal and without --yes.
func needsYes() error {
	return fmt.Errorf("%w: pass --yes to do this without a terminal", replay.ErrNeedsConfirmation)
}

func printPlan(f *Factory, p replay.Plan) error {
	p = hintPlan(p)
	if f.JSON() {
		return WriteJSONLines(f.IOStreams.Out, []replay.Plan{p})
	}
	return WritePlan(f.IOStreams.Out, p, 50)
}

// previewRemoval lists what a removing command would take, and asks.
func previewRemoval(ctx context.Context, f *Factory, s *replay.Session, verb, queue string, sel replay.Selector) error {
	out := f.IOStreams.Out
	b, err := s.Browse(ctx, replay.BrowseOptions{Queue: queue, IDs: sel.IDs, Filter: sel.Filter})
	if err != nil {
		return cliErr(err)
	}
	if f.JSON() {
		if err := WriteJSONLines(out, b.Summaries); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(out, "%s %d message(s) from %s:\n", verb, len(b.Summaries), queue)
		t := &SummaryTable{W: out, Width: f.IOStreams.Width()}
		if err := t.Write(b.Summaries); err != nil {
			return err
		}
	}
	return confirm(ctx, f)
}

// runAndReport runs a removing or sending command with progress (a
// carriage-return line on a terminal, JSON events with -o json) and prints
// its result on w; exit 3 when some messages were not done.
func runAndReport(f *Factory, w io.Writer, verb string, do func(func(replay.Event)) (replay.Result, error)) error {
	pp := &ProgressPrinter{Verb: verb}
	if f.JSON() {
		pp.JSON = w
	} else if f.IOStreams.IsTerminal() {
		pp.Terminal = f.IOStreams.ErrOut
	}
	res, err := do(pp.Event)
	pp.Finish()
	res = hintResult(res)
	if f.JSON() {
		if werr := WriteJSONLines(w, []ResultJSON{{Event: replay.EventFinished, Result: res}}); werr != nil && err == nil {
			err = werr
		}
	} else if res.Done+res.Failed+res.Skipped > 0 || err == nil {
		if werr := WriteResult(w, verb, res); werr != nil && err == nil {
			err = werr
		}
	}
	if err != nil {
		return cliErr(err)
	}
	return res.Err()
}

// notes prints what a browse pass wants the user to know, on stderr.
func notes(f *Factory, notes []string) {
	for _, n := range notes {
		fmt.Fprintln(f.IOStreams.ErrOut, "note: "+n)
	}
}
