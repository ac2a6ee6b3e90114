package cli

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/parkinglot/parkinglot/replay"
)

// DeleteOptions are `parkinglot delete`'s.
type DeleteOptions struct {
	*Factory
	Queue  string
	Select replay.Selector
	Yes    bool
	// NoTrunc: the preview cuts no column (tableWidth).
	NoTrunc bool
}

// NewCmdDelete is `parkinglot delete QUEUE (--id ID… | --filter EXPR |
// --all) [--yes] [--no-trunc]`.
func NewCmdDelete(f *Factory, runF func(context.Context, *DeleteOptions) error) *cobra.Command {
	opts := &DeleteOptions{Factory: f}
	var sel selectionFlags
	cmd := &cobra.Command{
		Use:   "delete QUEUE (--id ID… | --filter EXPR | --all) [--yes]",
		Short: "Remove chosen messages from a parking lot (audit-logged)",
		Args:  oneArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			choice, err := sel.selector()
			if err != nil {
				return err
			}
			opts.Queue, opts.Select = args[0], choice
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return deleteRun(cmd.Context(), opts)
		},
	}
	sel.register(cmd, true, "message id; repeatable", "messages matching this expression")
	cmd.Flags().BoolVar(&opts.Yes, "yes", false, "do not ask (needed without a terminal)")
	noTruncFlag(cmd, &opts.NoTrunc)
	return cmd
}

func deleteRun(ctx context.Context, opts *DeleteOptions) error {
	f := opts.Factory
	s, err := f.Session(ctx, "delete")
	if err != nil {
		return err
	}
	defer s.Close()
	limit := 0
	if !opts.Yes {
		if limit, err = previewRemoval(ctx, f, s, "delete", opts.Queue, opts.Select, opts.NoTrunc); err != nil {
			return err
		}
	}
	return runAndReportLeft(ctx, f, f.IOStreams.Out, "deleted", stillParked(ctx, s, opts.Queue), func(progress func(replay.Event)) (replay.Result, error) {
		return s.Delete(ctx, replay.DeleteOptions{Queue: opts.Queue, Select: opts.Select, Limit: limit, Progress: progress})
	})
}
