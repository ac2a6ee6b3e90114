package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/replay"
	"github.com/parkinglot/parkinglot/ui/format"
)

// Tailer is what `tail` needs of the engine: a *replay.Session, or a fake
// in tests.
type Tailer interface {
	Tail(ctx context.Context, o replay.TailOptions) (replay.TailResult, error)
	Close() error
}

// TailOptions are `parkinglot tail`'s.
type TailOptions struct {
	*Factory
	Queues []string
	Filter string
	// Open reaches the engine; nil: the factory's session.
	Open func(ctx context.Context) (Tailer, error)
}

// NewCmdTail is `parkinglot tail [LOT…]`.
func NewCmdTail(f *Factory, runF func(context.Context, *TailOptions) error) *cobra.Command {
	opts := &TailOptions{Factory: f}
	cmd := &cobra.Command{
		Use:   "tail [LOT…] [--filter EXPR]",
		Short: "Print each message as it enters the parking lots, without touching them",
		Long: `Print each message as it enters the parking lots named (every parking lot
of the vhost when none is), one line each: time, lot, id, attempts, error
group, origin, and "came back" for a replayed message that failed again.
Ctrl-C ends it with a count by error group.

The parking lots are never consumed: a tap queue of parkinglot's own,
exclusive (gone with the tail however it ends) and bounded, is bound like
each lot to the exchanges that route to it and receives a copy of each
arrival. A lot only the default exchange feeds (dead letters with an
x-dead-letter-routing-key naming it through the default exchange, a publish
by name) cannot be tapped, and the tail says so.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Queues = args
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return tailRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Filter, "filter", "", "only arrivals this expression matches (see parkinglot list --help)")
	return cmd
}

// tailLine is one arrival as -o json writes it.
type tailLine struct {
	At      time.Time      `json:"at"`
	Queue   string         `json:"queue"`
	Summary replay.Summary `json:"summary"`
}

func tailRun(ctx context.Context, opts *TailOptions) error {
	if _, err := replay.CompileFilter(opts.Filter); err != nil {
		return &UsageError{err}
	}
	open := opts.Open
	if open == nil {
		open = func(ctx context.Context) (Tailer, error) { return opts.Session(ctx, "tail") }
	}
	s, err := open(ctx)
	if err != nil {
		return err
	}
	defer s.Close()
	out, errOut := opts.IOStreams.Out, opts.IOStreams.ErrOut
	var (
		mu   sync.Mutex
		werr error
	)
	res, err := s.Tail(ctx, replay.TailOptions{Queues: opts.Queues, Filter: opts.Filter,
		OnTapped: func(setup replay.TailSetup) { writeTailSetup(errOut, setup) },
		OnDropped: func(lot string) {
			fmt.Fprintf(errOut, "%s: the tap was full: an arrival was dropped unseen\n", format.Name(lot))
		},
		OnRetapped: func(g replay.TailGap) { fmt.Fprintln(errOut, "tail: "+format.TailGap(g)) },
		OnArrival: func(a replay.TailArrival) {
			mu.Lock()
			defer mu.Unlock()
			if werr != nil {
				return
			}
			if opts.JSON() {
				werr = WriteJSONLines(out, []tailLine{{At: a.At, Queue: a.Queue, Summary: a.Summary}})
				return
			}
			_, werr = fmt.Fprintln(out, tailRow(a))
		}})
	if werr != nil {
		return werr
	}
	writeTailSummary(errOut, res)
	if errors.Is(err, replay.ErrNothingToTail) {
		return &UsageError{err}
	}
	return err
}

// tailRow is one arrival for people.
func tailRow(a replay.TailArrival) string {
	f := a.Summary.Facts
	origin := "?"
	if a.Summary.Origin != nil {
		origin = format.Destination(a.Summary.Origin.Destination)
	}
	row := fmt.Sprintf("%s  %s  %s  attempts %d  %s  from %s", format.Clock(a.At), format.Name(a.Queue),
		format.Name(a.Summary.ID), f.Attempts, format.OneLine(orNoError(a.Summary.Group)), origin)
	if f.CameBack {
		row += "  came back"
	}
	return row
}

// writeTailSetup says how each lot is followed, and which cannot be.
func writeTailSetup(w io.Writer, setup replay.TailSetup) {
	for _, t := range setup.Tapped {
		var from []string
		for _, b := range t.Bindings {
			f := format.Name(b.Source)
			if b.RoutingKey != "" {
				f += " (key " + format.Name(b.RoutingKey) + ")"
			}
			from = append(from, f)
		}
		fmt.Fprintf(w, "tailing %s: a copy of what %s routes to it\n", format.Name(t.Queue), strings.Join(from, ", "))
	}
	for _, u := range setup.Untapped {
		if errors.Is(u.Err, broker.ErrUntappable) {
			fmt.Fprintf(w, "%s: not tailed: only the default exchange routes to it (dead letters by x-dead-letter-routing-key, or a publish by name), and no copy of that can be bound; dead-letter it through an exchange (x-dead-letter-exchange) to tail it\n", format.Name(u.Queue))
			continue
		}
		fmt.Fprintf(w, "%s: not tailed: %s\n", format.Name(u.Queue), firstLine(u.Err.Error()))
	}
}

// writeTailSummary counts what arrived, by error group, largest first.
func writeTailSummary(w io.Writer, res replay.TailResult) {
	fmt.Fprintf(w, "%d arrived", res.Arrived)
	if res.Dropped > 0 {
		fmt.Fprintf(w, ", %d dropped unseen (a full tap)", res.Dropped)
	}
	fmt.Fprintln(w)
	for _, g := range byCount(res.ByGroup) {
		fmt.Fprintf(w, "  %d × %s\n", res.ByGroup[g], format.OneLine(orNoError(g)))
	}
}

// byCount are the groups of counts, the largest first.
func byCount(counts map[string]int) []string {
	return slices.SortedFunc(maps.Keys(counts), func(a, b string) int {
		return cmp.Or(counts[b]-counts[a], strings.Compare(a, b))
	})
}

// orNoError names the group of messages that carry no error.
func orNoError(group string) string { return cmp.Or(group, "(no error)") }
