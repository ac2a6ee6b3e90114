package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/parkinglot/parkinglot/replay"
	"github.com/parkinglot/parkinglot/ui/format"
)

// ListOptions are `parkinglot list`'s.
type ListOptions struct {
	*Factory
	Queue  string
	Limit  int
	Filter string
	// NoTrunc: cut no column, even on a terminal (tableWidth).
	NoTrunc bool
}

// NewCmdList is `parkinglot list QUEUE [--limit N] [--filter EXPR]
// [--no-trunc]`.
func NewCmdList(f *Factory, runF func(context.Context, *ListOptions) error) *cobra.Command {
	opts := &ListOptions{Factory: f}
	cmd := &cobra.Command{
		Use:   "list QUEUE [--limit N] [--filter EXPR] [--no-trunc]",
		Short: "List parked messages without removing them: id, parked age, origin, attempts, error",
		Long: `List parked messages without removing them (each is held and given back).

--filter is an expr-lang expression over: id, exchange, routing_key, queue,
error, error_type, attempts, age, parked_at, headers, body, content_type,
redelivered, origin_exchange, origin_routing_key, came_back (replayed and
parked again), replay_id, replay_run. Examples:
  --filter 'error contains "timeout"'
  --filter 'age > duration("1h") && attempts >= 3'
  --filter 'headers["tenant"] == "acme"'

On a terminal the ORIGIN and ERROR columns are cut to its width (COLUMNS
when set); piped they are not, unless COLUMNS is set. --no-trunc never
cuts. An id is never cut.`,
		Args: oneArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Queue = args[0]
			if _, err := replay.CompileFilter(opts.Filter); err != nil {
				return cliErr(err)
			}
			if opts.Limit < 0 {
				return usagef("--limit %d: want 0 (all) or more", opts.Limit)
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return listRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().IntVar(&opts.Limit, "limit", 0, "list at most N messages (0: all)")
	cmd.Flags().StringVar(&opts.Filter, "filter", "", "only messages matching this expression")
	noTruncFlag(cmd, &opts.NoTrunc)
	return cmd
}

func listRun(ctx context.Context, opts *ListOptions) error {
	s, err := opts.Session(ctx, "list")
	if err != nil {
		return err
	}
	defer s.Close()
	out := opts.IOStreams.Out
	table := &SummaryTable{W: out, Width: opts.tableWidth(opts.NoTrunc)}
	var werr error
	listed := 0
	// StreamOnly: each batch is printed and dropped, so listing a parking
	// lot of a million messages holds one batch, not a million summaries.
	b, err := s.Browse(ctx, replay.BrowseOptions{Queue: opts.Queue, Limit: opts.Limit, Filter: opts.Filter, StreamOnly: true,
		OnBatch: func(batch []replay.Summary) {
			listed += len(batch)
			if werr != nil {
				return
			}
			if opts.JSON() {
				werr = WriteJSONLines(out, batch)
			} else {
				werr = table.Write(batch)
			}
		}})
	if err != nil {
		return err
	}
	if werr != nil {
		return werr
	}
	if !opts.JSON() && listed == 0 {
		fmt.Fprintf(out, "no messages in %s match\n", opts.Queue)
	}
	if b.Management != nil {
		notes(opts.Factory, []string{errorLine(b.Management)})
	}
	notes(opts.Factory, format.Notes(b.Notes))
	return nil
}
