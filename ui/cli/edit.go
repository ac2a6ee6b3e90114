package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/parkinglot/parkinglot/replay"
	"github.com/parkinglot/parkinglot/retrycore"
	"github.com/parkinglot/parkinglot/ui/editor"
	"github.com/parkinglot/parkinglot/ui/format"
)

// EditOptions are `parkinglot edit`'s.
type EditOptions struct {
	*Factory
	replay.Options // Queue, To, Target; Select is the one ID
	ID             string
	Yes            bool
}

// NewCmdEdit is `parkinglot edit QUEUE ID [--to …|--target …] [--yes]`.
func NewCmdEdit(f *Factory, runF func(context.Context, *EditOptions) error) *cobra.Command {
	opts := &EditOptions{Factory: f}
	var dest destinationFlags
	cmd := &cobra.Command{
		Use:   "edit QUEUE ID [--to EXCHANGE:ROUTING_KEY | --target origin|queue] [--yes]",
		Short: "Edit a parked message's body in $EDITOR, validate it (JSON when the content type says so) and replay it",
		Args:  exactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			to, target, err := dest.parse(cmd)
			if err != nil {
				return err
			}
			opts.Queue, opts.ID, opts.To, opts.Target = args[0], args[1], to, target
			opts.Select = replay.Selector{IDs: []string{args[1]}}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return editRun(cmd.Context(), opts)
		},
	}
	dest.register(cmd, "send to EXCHANGE:ROUTING_KEY instead of the origin", "origin or queue (only the queue that failed)")
	cmd.Flags().BoolVar(&opts.Yes, "yes", false, "do not ask (needed without a terminal)")
	return cmd
}

// errNoEditor refuses the vi fallback without a terminal (edit --yes from
// a script), where vi would wait for keys that never come.
var errNoEditor = fmt.Errorf("%w: none set, and %s needs a terminal: set $VISUAL or $EDITOR; nothing changed", editor.ErrEditor, editor.Default)

func editRun(ctx context.Context, opts *EditOptions) error {
	f, io := opts.Factory, opts.IOStreams
	o := opts.Options
	if opts.Yes && !io.IsTerminal() { // without --yes it prints the plan and asks for --yes
		if _, fallback := editor.FromEnv(f.Getenv); fallback {
			return errNoEditor
		}
	}
	s, err := f.Session(ctx, "edit")
	if err != nil {
		return err
	}
	defer s.Close()
	if !opts.Yes && !io.IsTerminal() {
		if _, err := showPlan(ctx, f, s, o); err != nil {
			return err
		}
		return needsYes()
	}
	d, err := s.PrepareEdit(ctx, o.Queue, opts.ID)
	if err != nil {
		return err
	}
	defer func() { _ = d.Discard() }()
	ed, err := editor.Command(ctx, d.Path)
	if err != nil {
		return err
	}
	ed.Stdin, ed.Stdout, ed.Stderr = io.In, io.Out, io.ErrOut
	if err := ed.Run(); err != nil {
		return editor.Failed(ed, err)
	}
	body, err := d.Check()
	if err != nil {
		return err
	}
	if !d.Changed(body) {
		fmt.Fprintln(io.ErrOut, "note: the body is unchanged")
	}
	if !opts.Yes {
		fmt.Fprintf(io.Out, "replay the edited %s (%d bytes) → %s\n", format.Name(d.ID), len(body), editDestination(d.Summary, o))
		if err := confirm(ctx, f); err != nil {
			return err
		}
	}
	return runAndReport(f, io.Out, "replayed", func(progress func(replay.Event)) (replay.Result, error) {
		o.Progress = progress
		return s.FinishEdit(ctx, d, o)
	})
}

// editDestination is where the edited copy goes, worded as a replay
// plan's items are: --to, the queue that failed (--target queue), or the
// origin, each with why.
func editDestination(sum replay.Summary, o replay.Options) string {
	switch {
	case o.To != nil:
		return format.Destination(*o.To) + "  (" + retrycore.SourceOverride + ")"
	case o.Target == replay.TargetQueue:
		if sum.Origin == nil || sum.Origin.Queue == "" {
			return "? (the queue it failed in is not known; it would stay parked)"
		}
		return format.Destination(retrycore.Destination{RoutingKey: sum.Origin.Queue}) + "  (" + replay.SourceTargetQueue + ")"
	case sum.Origin != nil:
		return format.Destination(sum.Origin.Destination) + "  (" + sum.Origin.Source + ")"
	}
	return "its origin"
}
