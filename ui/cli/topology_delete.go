package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/parkinglot/parkinglot/retrycore"
	"github.com/parkinglot/parkinglot/ui/format"
)

// TopologyDeleteOptions are `parkinglot topology delete`'s.
type TopologyDeleteOptions struct {
	*Factory
	File       string
	Yes, Force bool
}

// newCmdTopologyDelete is `topology delete -f PIPELINE.yaml`.
func newCmdTopologyDelete(f *Factory, runF func(context.Context, *TopologyDeleteOptions) error) *cobra.Command {
	opts := &TopologyDeleteOptions{Factory: f}
	cmd := &cobra.Command{
		Use:   "delete -f PIPELINE.yaml [--yes] [--force]",
		Short: "Delete a pipeline's queues (the delay queues of delays it no longer lists too) and exchanges; a queue that holds messages is kept unless --force",
		Long: `Delete the pipeline's main queue, delay queues, parking lot and exchanges.
Delay queues of delays the file no longer lists (left behind when the
delays changed) are found by name and shape and deleted too. A queue that
holds messages is kept (the broker checks at the moment of the delete),
unless --force, which discards them; an exchange something else is bound to
is kept. Shows the plan and asks first (--yes without a terminal). Exits 3
when something was kept.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if opts.File == "" {
				return usagef("topology delete: -f PIPELINE.yaml is required")
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return topologyDeleteRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVarP(&opts.File, "file", "f", "", "pipeline file (YAML)")
	cmd.Flags().BoolVar(&opts.Yes, "yes", false, "do not ask (needed without a terminal)")
	cmd.Flags().BoolVar(&opts.Force, "force", false, "delete queues that hold messages too, discarding them")
	return cmd
}

func topologyDeleteRun(ctx context.Context, opts *TopologyDeleteOptions) error {
	f := opts.Factory
	p, err := retrycore.LoadPipeline(opts.File)
	if err != nil {
		return &UsageError{err}
	}
	name := "parkinglot topology " + p.Name
	m, _, err := opts.checkedManagement(ctx, name) // optional: without it old delay queues are not found
	if err != nil {
		return err
	}
	plan, err := retrycore.PlanRemoval(ctx, opts.Conn.Options(name), m, p)
	if err != nil {
		return err
	}
	if f.JSON() {
		if err := json.NewEncoder(f.IOStreams.Out).Encode(plan); err != nil {
			return err
		}
	} else {
		fmt.Fprintln(f.IOStreams.Out, strings.Join(format.RemovalPlan(plan, opts.Force), "\n"))
	}
	if !opts.Yes {
		if err := confirm(ctx, f); err != nil {
			return err
		}
	}
	rep, err := retrycore.Remove(ctx, opts.Conn.Options(name), plan, opts.Force)
	if len(rep.Entries) > 0 {
		var werr error
		if f.JSON() {
			werr = json.NewEncoder(f.IOStreams.Out).Encode(rep)
		} else {
			werr = writeTopology(f.IOStreams.Out, rep)
		}
		if err == nil {
			err = werr
		}
	}
	return err
}
