package cli

import (
	"context"
	"log/slog"

	"github.com/spf13/cobra"

	"github.com/parkinglot/parkinglot/broker/store"
	"github.com/parkinglot/parkinglot/ui"
)

// TUIOptions are `parkinglot tui`'s.
type TUIOptions struct {
	*Factory
	ui.Options // Queue ("" for the queue list) and the demo's Notice
}

// NewCmdTUI is `parkinglot tui [QUEUE]`.
func NewCmdTUI(f *Factory, runF func(context.Context, *TUIOptions) error) *cobra.Command {
	opts := &TUIOptions{Factory: f}
	return &cobra.Command{
		Use:   "tui [QUEUE]",
		Short: "Open the terminal UI (on QUEUE's messages when given)",
		Args:  usageArgs(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.Queue = args[0]
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return tuiRun(cmd.Context(), opts)
		},
	}
}

// tuiRun opens the terminal UI. It returns once every message a browse
// held is given back.
func tuiRun(ctx context.Context, opts *TUIOptions) error {
	store.ApplyMemoryLimit()
	quiet := *opts.Factory
	quiet.Log = slog.New(slog.DiscardHandler) // the TUI owns the terminal: log lines would tear it
	s, err := quiet.engineSession(ctx, "tui")
	if err != nil {
		return err
	}
	defer s.Close()
	o := opts.Options
	o.Bodies = opts.Factory.Bodies
	return ui.Run(ctx, ui.NewSessionBackend(s), ui.RunOptions{Options: o, Streams: opts.IOStreams})
}
