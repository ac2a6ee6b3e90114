package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

	"github.com/spf13/cobra"

	"github.com/parkinglot/parkinglot/replay"
)

// ExportOptions are `parkinglot export`'s.
type ExportOptions struct {
	*Factory
	Queue  string
	File   string // "" or "-": stdout
	Select replay.Selector
	Remove bool
	Yes    bool
	// NoTrunc: --remove's preview cuts no column (tableWidth).
	NoTrunc bool
}

// NewCmdExport is `parkinglot export QUEUE [--file F] [--filter EXPR |
// --id ID…] [--remove [--yes]] [--no-trunc]`.
func NewCmdExport(f *Factory, runF func(context.Context, *ExportOptions) error) *cobra.Command {
	opts := &ExportOptions{Factory: f}
	var sel selectionFlags
	cmd := &cobra.Command{
		Use:   "export QUEUE [--file F] [--filter EXPR] [--remove [--yes]]",
		Short: "Write messages as JSON Lines (lossless); non-destructive unless --remove",
		Args:  oneArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			choice, err := sel.narrowing()
			if err != nil {
				return err
			}
			if opts.Remove && (opts.File == "" || opts.File == "-") {
				return usagef("--remove needs --file F: a message is removed only after its line is fsynced to a file")
			}
			opts.Queue, opts.Select = args[0], choice
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return exportRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.File, "file", "", "export file, created 0600 and never overwritten (default: stdout)")
	sel.register(cmd, false, "only this message id; repeatable", "only messages matching this expression")
	cmd.Flags().BoolVar(&opts.Remove, "remove", false, "remove each message once its line is fsynced to --file")
	cmd.Flags().BoolVar(&opts.Yes, "yes", false, "do not ask (needed for --remove without a terminal)")
	noTruncFlag(cmd, &opts.NoTrunc)
	return cmd
}

func exportRun(ctx context.Context, opts *ExportOptions) error {
	f, io := opts.Factory, opts.IOStreams
	s, err := f.Session(ctx, "export")
	if err != nil {
		return err
	}
	defer s.Close()
	limit := 0
	if opts.Remove && !opts.Yes {
		if limit, err = previewRemoval(ctx, f, s, "export to "+opts.File+" and remove", opts.Queue, opts.Select, opts.NoTrunc); err != nil {
			return err
		}
	}
	report := io.Out
	if opts.File == "" || opts.File == "-" {
		report = io.ErrOut // stdout carries the export
	}
	verb := "exported"
	if opts.Remove {
		verb = "exported and removed"
	}
	err = runAndReportLeft(ctx, f, report, verb, stillParked(ctx, s, opts.Queue), func(progress func(replay.Event)) (replay.Result, error) {
		return s.Export(ctx, replay.ExportOptions{Queue: opts.Queue, Select: opts.Select, File: opts.File, Out: io.Out, Remove: opts.Remove, Limit: limit, Progress: progress})
	})
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("%w; choose another --file", err)
	}
	return err
}
