package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/parkinglot/parkinglot/retrycore"
	"github.com/parkinglot/parkinglot/ui/format"
)

// TopologyDeclareOptions are `parkinglot topology declare`'s.
type TopologyDeclareOptions struct {
	*Factory
	File string
}

// NewCmdTopology is `parkinglot topology` with its subcommands `declare
// -f PIPELINE.yaml` and `delete` (topology_delete.go).
func NewCmdTopology(f *Factory, runF func(context.Context, *TopologyDeclareOptions) error) *cobra.Command {
	// Runnable so that a mistyped subcommand is refused (exit 2) rather
	// than answered with help (exit 0).
	topo := &cobra.Command{Use: "topology", Short: "Manage a pipeline's three-tier topology", Args: subcommandArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() }}
	opts := &TopologyDeclareOptions{Factory: f}
	declare := &cobra.Command{
		Use:   "declare -f PIPELINE.yaml",
		Short: "Declare the main, retry (one delay queue per tier) and error tiers; idempotent",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if opts.File == "" {
				return usagef("topology declare: -f PIPELINE.yaml is required")
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return topologyDeclareRun(cmd.Context(), opts)
		},
	}
	declare.Flags().StringVarP(&opts.File, "file", "f", "", "pipeline file (YAML)")
	topo.AddCommand(declare, newCmdTopologyDelete(f, nil))
	return topo
}

func topologyDeclareRun(ctx context.Context, opts *TopologyDeclareOptions) error {
	p, err := retrycore.LoadPipeline(opts.File)
	if err != nil {
		return &UsageError{err} // a mistake in the file, like one in the config
	}
	m, _, err := opts.checkedManagement(ctx, "parkinglot topology "+p.Name) // optional: without it the broker's 406 text is used
	if err != nil {
		return err
	}
	rep, err := retrycore.DeclarePipeline(ctx, opts.Conn.Options("parkinglot topology "+p.Name), m, p)
	if err != nil {
		return err
	}
	if opts.JSON() {
		return json.NewEncoder(opts.IOStreams.Out).Encode(rep)
	}
	return writeTopology(opts.IOStreams.Out, rep)
}

// writeTopology prints a topology report for people: one line per
// entity, then any warnings.
func writeTopology(w io.Writer, r retrycore.Report) error {
	var b strings.Builder
	fmt.Fprintf(&b, "pipeline %s on RabbitMQ %s\n", r.Pipeline, r.Server)
	for _, e := range r.Entries {
		fmt.Fprintf(&b, "  %-8s  %-8s  %s", e.Status, e.Kind, e.Name)
		if d := format.TopologyDetail(e); d != "" {
			fmt.Fprintf(&b, "  (%s)", d)
		}
		b.WriteByte('\n')
	}
	for _, warn := range r.Warnings {
		fmt.Fprintf(&b, "warning: %s\n", warn)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
