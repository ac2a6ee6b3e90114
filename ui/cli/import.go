package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/parkinglot/parkinglot/replay"
)

// ImportOptions are `parkinglot import`'s.
type ImportOptions struct {
	*Factory
	replay.ImportOptions // File, To, Rate, Window; In is the input stream
	Yes                  bool
}

// NewCmdImport is `parkinglot import FILE [--to EXCHANGE:ROUTING_KEY]
// [--rate N] [--yes]`.
func NewCmdImport(f *Factory, runF func(context.Context, *ImportOptions) error) *cobra.Command {
	opts := &ImportOptions{Factory: f}
	var to string
	cmd := &cobra.Command{
		Use:   "import FILE [--to EXCHANGE:ROUTING_KEY] [--rate N] [--yes]",
		Short: "Publish an export back (confirmed, mandatory); by default each message to the queue it was exported from",
		Args:  oneArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			dest, err := destinationFlag(cmd, to, "each message to the queue it was exported from")
			if err != nil {
				return err
			}
			if args[0] == "-" && !opts.Yes {
				return usagef("import -: stdin carries the file, so the confirmation cannot be asked; pass --yes")
			}
			if err := checkRateWindow(opts.Rate, opts.Window); err != nil {
				return err
			}
			opts.File, opts.In, opts.To = args[0], f.IOStreams.In, dest
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return importRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&to, "to", "", "publish to EXCHANGE:ROUTING_KEY instead of the queue each message was exported from")
	cmd.Flags().Float64Var(&opts.Rate, "rate", 0, "at most N messages per second (0: unlimited)")
	cmd.Flags().BoolVar(&opts.Yes, "yes", false, "do not ask (needed without a terminal)")
	cmd.Flags().IntVar(&opts.Window, "window", replay.DefaultWindow, "messages in flight")
	return cmd
}

func importRun(ctx context.Context, opts *ImportOptions) error {
	err := doImport(ctx, opts)
	if errors.Is(err, replay.ErrNoImportDestination) {
		return fmt.Errorf("%w; pass --to EXCHANGE:ROUTING_KEY", err)
	}
	return err
}

func doImport(ctx context.Context, opts *ImportOptions) error {
	f, io := opts.Factory, opts.IOStreams
	o := opts.ImportOptions
	if !opts.Yes {
		plan, err := replay.PlanImport(o)
		if err != nil {
			return cliErr(err)
		}
		if f.JSON() {
			err = WriteJSONLines(io.Out, []replay.ImportPlan{plan})
		} else {
			err = WriteImportPlan(io.Out, plan)
		}
		if err != nil {
			return err
		}
		if err := confirm(ctx, f); err != nil {
			return err
		}
	}
	s, err := f.Session(ctx, "import")
	if err != nil {
		return err
	}
	defer s.Close()
	left := func() (string, int, bool) {
		return "the rest of " + cmp.Or(strings.TrimPrefix(o.File, "-"), "stdin") + " not published", 0, false
	}
	return runAndReportLeft(ctx, f, io.Out, "imported", left, func(progress func(replay.Event)) (replay.Result, error) {
		o.Progress = progress
		return s.Import(ctx, o)
	})
}
