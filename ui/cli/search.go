package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/parkinglot/parkinglot/replay"
	"github.com/parkinglot/parkinglot/ui/format"
)

// Searcher is what `search` needs of the engine: a *replay.Session, or a
// fake in tests.
type Searcher interface {
	Search(ctx context.Context, o replay.SearchOptions) (*replay.SearchResult, error)
	Close() error
}

// SearchOptions are `parkinglot search`'s.
type SearchOptions struct {
	*Factory
	Expr   string
	Queues []string
	Text   bool // the argument is plain text even if it reads as an expression
	// NoTrunc: cut no column, even on a terminal (tableWidth).
	NoTrunc bool
	// Open reaches the engine; nil: the factory's session.
	Open func(ctx context.Context) (Searcher, error)
	Now  func() time.Time
}

// NewCmdSearch is `parkinglot search EXPR [QUEUE…]`.
func NewCmdSearch(f *Factory, runF func(context.Context, *SearchOptions) error) *cobra.Command {
	opts := &SearchOptions{Factory: f}
	cmd := &cobra.Command{
		Use:   "search EXPR [QUEUE…] [--text]",
		Short: "Find messages across every parking lot (or the queues named), without removing any",
		Long: `Search every parking lot of the vhost (as "queues" marks them), or the
queues named, and print the matches queue by queue as they are found. Each
queue is browsed without harm: every message is given back, in order, and
quorum delivery limits are kept.

EXPR is a --filter expression (see parkinglot list --help), or plain text
matched, ignoring case, against the id, the error and the body:
  parkinglot search 4711
  parkinglot search 'error contains "ledger" && attempts > 2'
  parkinglot search --text 'attempts > 2'      # the words, not the expression

On a terminal the QUEUE and ERROR columns are cut to its width (COLUMNS
when set); piped they are not, unless COLUMNS is set. --no-trunc never
cuts.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) < 1 {
				return usagef("search needs what to look for: parkinglot search EXPR [QUEUE…]")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Expr, opts.Queues = args[0], args[1:]
			if strings.TrimSpace(opts.Expr) == "" {
				return usagef("search: EXPR is empty")
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return searchRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.Text, "text", false, "match EXPR as plain text even when it reads as an expression")
	noTruncFlag(cmd, &opts.NoTrunc)
	return cmd
}

func searchRun(ctx context.Context, opts *SearchOptions) error {
	q := replay.ParseQuery(opts.Expr)
	if opts.Text {
		q = replay.TextQuery(opts.Expr)
	}
	open := opts.Open
	if open == nil {
		open = func(ctx context.Context) (Searcher, error) { return opts.Session(ctx, "search") }
	}
	now := time.Now
	if opts.Now != nil {
		now = opts.Now
	}
	s, err := open(ctx)
	if err != nil {
		return err
	}
	defer s.Close()
	out, errOut := opts.IOStreams.Out, opts.IOStreams.ErrOut
	if q.Text != "" && !opts.JSON() && !opts.Text {
		fmt.Fprintf(errOut, "searching for the text %q in ids, errors and bodies\n", q.Text)
	}
	var (
		mu   sync.Mutex
		werr error
		idW  int // the ID column's width, set by the first match (idColumn)
	)
	width := opts.tableWidth(opts.NoTrunc)
	res, err := s.Search(ctx, replay.SearchOptions{Queues: opts.Queues, Query: q,
		Keep: -1, // the CLI prints each match as it comes and keeps none
		OnMatch: func(queue string, sum replay.Summary) {
			mu.Lock()
			defer mu.Unlock()
			if werr != nil {
				return
			}
			if opts.JSON() {
				werr = WriteJSONLines(out, []replay.SearchMatch{{Queue: queue, Summary: sum}})
				return
			}
			id := format.Name(sum.ID)
			if idW == 0 {
				idW = idColumn(id)
				_, werr = fmt.Fprintln(out, searchRow(width, idW, "QUEUE", "ID", "AGE", "ERROR"))
			}
			_, werr = fmt.Fprintln(out, searchRow(width, idW, format.Name(queue), id, format.Age(sum.Age(now())), format.OneLine(sum.Facts.Error)))
		}})
	if werr != nil {
		return werr
	}
	if res != nil {
		for _, qs := range res.Queues {
			if qs.Err != nil {
				fmt.Fprintf(errOut, "%s: not searched: %s\n", qs.Queue, firstLine(qs.Err.Error()))
			}
		}
		if !opts.JSON() {
			writeSearchSummary(errOut, res)
		}
	}
	if errors.Is(err, replay.ErrSearchIncomplete) {
		return fmt.Errorf("search: %w", err)
	}
	return err
}

// searchRow is one row of search's table; the id comes whole (idColumn).
// A width of 0 cuts nothing.
func searchRow(width, idW int, queue, id, age, errText string) string {
	const colQueue, colAge = 28, 6
	if width > 0 {
		errW := max(width-colQueue-max(fmtWidth(id), idW)-colAge-3, 10)
		queue, errText = format.Cut(queue, colQueue), format.Cut(errText, errW)
	}
	return fmt.Sprintf("%-*s %-*s %-*s %s", colQueue, queue, idW, id, colAge, age, errText)
}

// writeSearchSummary is the last line: how many matched, where, of how
// many looked at.
func writeSearchSummary(w io.Writer, res *replay.SearchResult) {
	scanned, in := 0, 0
	for _, qs := range res.Queues {
		scanned += qs.Scanned
		if qs.Matched > 0 {
			in++
		}
	}
	fmt.Fprintf(w, "%d match(es) in %d of %d queue(s); %d message(s) looked at, all given back\n",
		res.Matched, in, len(res.Queues), scanned)
}
