package cli

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/parkinglot/parkinglot/replay"
)

// The prompt's refusals: both change nothing and exit 2.
var (
	// ErrNeedsConfirmation: a command that removes or sends messages could
	// not ask (no terminal) and was not given --yes; it printed the plan.
	ErrNeedsConfirmation = errors.New("nothing changed")
	// ErrDeclined: the person at the prompt did not answer yes ("n", an
	// empty line, end of input or Ctrl-C).
	ErrDeclined = errors.New("nothing changed")
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
		return ErrDeclined
	}
	return nil
}

// needsYes is the refusal to act without a terminal and without --yes.
func needsYes() error {
	return fmt.Errorf("%w: pass --yes to do this without a terminal", ErrNeedsConfirmation)
}

// showPlan works out and prints what a replay would do: as JSON (one
// line, every item) with -o json, else the count, the routes and the first
// previewRows items. The items are streamed (to the output's temporary
// file for JSON), so a plan of a million messages holds none in memory;
// the plan returned has the counts and routes, and the items printed.
func showPlan(ctx context.Context, f *Factory, s Session, o replay.Options) (replay.Plan, error) {
	if f.JSON() {
		return showPlanJSON(ctx, f, s, o)
	}
	var first []replay.PlanItem
	p, err := s.PlanEach(ctx, o, replay.PlanSink{Item: func(it replay.PlanItem) error {
		if len(first) < previewRows {
			first = append(first, it)
		}
		return nil
	}})
	if err != nil {
		return p, destinationErr(err)
	}
	p.Items = first
	return p, WritePlan(f.IOStreams.Out, hintPlan(p), previewRows)
}

// previewRemoval lists what a removing command would take, and asks. It
// returns how many it listed: the run takes no more (the count the person
// agreed to; messages parked since arrive after them). noTrunc is the
// command's --no-trunc.
func previewRemoval(ctx context.Context, f *Factory, s Session, verb, queue string, sel replay.Selector, noTrunc bool) (int, error) {
	out := f.IOStreams.Out
	// Streamed: a preview of a million messages holds one batch at a time.
	// A person sees the first previewRows rows and the count; -o json gets
	// every summary.
	t := &SummaryTable{W: out, Width: f.tableWidth(noTrunc)}
	n := 0
	var werr error
	_, err := s.Browse(ctx, replay.BrowseOptions{Queue: queue, IDs: sel.IDs, Filter: sel.Filter, StreamOnly: true,
		OnBatch: func(batch []replay.Summary) {
			shown := batch
			if !f.JSON() {
				shown = batch[:max(0, min(len(batch), previewRows-n))]
			}
			n += len(batch)
			if werr != nil || len(shown) == 0 {
				return
			}
			if f.JSON() {
				werr = WriteJSONLines(out, shown)
			} else {
				werr = t.Write(shown)
			}
		}})
	if err != nil {
		return 0, cliErr(err)
	}
	if werr != nil {
		return 0, werr
	}
	if !f.JSON() {
		more := ""
		if n > previewRows {
			more = fmt.Sprintf(" (the first %d shown)", previewRows)
		}
		fmt.Fprintf(out, "%s %d message(s) from %s%s\n", verb, n, queue, more)
	}
	return n, confirm(ctx, f)
}

// previewRows is how many messages a removal's preview lists on a terminal.
const previewRows = 50

// runAndReport runs a removing or sending command with progress (a
// carriage-return line on a terminal, JSON events with -o json) and prints
// its result on w; exit 3 when some messages were not done.
func runAndReport(f *Factory, w io.Writer, verb string, do func(func(replay.Event)) (replay.Result, error)) error {
	return runAndReportLeft(context.Background(), f, w, verb, nil, do)
}

// runAndReportLeft is runAndReport that, when ctx was interrupted before
// the run was all done, tells what is left (interrupt.go) in one line, and
// exits 130.
func runAndReportLeft(ctx context.Context, f *Factory, w io.Writer, verb string, left leftOver, do func(func(replay.Event)) (replay.Result, error)) error {
	return runAndReportWith(ctx, f, w, verb, left, func(pp *ProgressPrinter) (replay.Result, error) { return do(pp.Event) })
}

// runAndReportWith is runAndReportLeft for a run that writes lines of its
// own beside its events (ProgressPrinter.Line).
func runAndReportWith(ctx context.Context, f *Factory, w io.Writer, verb string, left leftOver, do func(*ProgressPrinter) (replay.Result, error)) error {
	pp := &ProgressPrinter{Verb: verb}
	if f.JSON() {
		pp.JSON = w
	} else if f.IOStreams.IsTerminal() {
		pp.Terminal = f.IOStreams.ErrOut
	}
	res, err := do(pp)
	pp.Finish()
	res = hintResult(res)
	// A run whose whole selection was read before the interruption ends
	// with no error of its own: what it did not send is still parked, and
	// it was interrupted all the same.
	if ctx.Err() != nil && err == nil && res.Failed+res.NotSent > 0 {
		err = context.Cause(ctx)
	}
	if err != nil && (ctx.Err() != nil || interrupted(err)) {
		return reportInterrupted(f, w, verb, left, res, err)
	}
	if f.JSON() {
		if werr := WriteJSONLines(w, []ResultJSON{newResultJSON(res)}); werr != nil && err == nil {
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
