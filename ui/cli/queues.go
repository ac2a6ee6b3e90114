package cli

import (
	"context"

	"github.com/spf13/cobra"
)

// QueuesOptions are `parkinglot queues`'s.
type QueuesOptions struct {
	*Factory
}

// NewCmdQueues is `parkinglot queues`.
func NewCmdQueues(f *Factory, runF func(context.Context, *QueuesOptions) error) *cobra.Command {
	opts := &QueuesOptions{Factory: f}
	return &cobra.Command{
		Use:   "queues",
		Short: "List queues with type, depth and consumers; parking lots marked",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return queuesRun(cmd.Context(), opts)
		},
	}
}

func queuesRun(ctx context.Context, opts *QueuesOptions) error {
	s, err := opts.Session(ctx, "queues")
	if err != nil {
		return err
	}
	defer s.Close()
	rows, err := s.Queues(ctx)
	if err != nil {
		return err
	}
	if opts.JSON() {
		return WriteJSONLines(opts.IOStreams.Out, rows)
	}
	return WriteQueues(opts.IOStreams.Out, rows)
}
