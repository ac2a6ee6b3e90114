package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/parkinglot/parkinglot/replay"
	"github.com/parkinglot/parkinglot/ui/format"
)

// ReplayOptions are `parkinglot replay`'s: the engine's options, and
// whether to only preview or not to ask.
type ReplayOptions struct {
	*Factory
	replay.Options
	DryRun, Yes bool
	Canary      canaryFlags
	// Status is --status RUN_ID: what became of a run (replay_status.go).
	Status string
	// RateFrom says where the rate in force comes from, for people.
	RateFrom string
	// Follow tails the parking lot from the replay's start until this
	// long after its end (follow.go); 0 does not.
	Follow time.Duration
}

// NewCmdReplay is `parkinglot replay QUEUE (--id ID… | --all | --filter
// EXPR) [--to EXCHANGE:ROUTING_KEY | --target origin|queue] [--rate N]
// [--dry-run] [--yes]`.
func NewCmdReplay(f *Factory, runF func(context.Context, *ReplayOptions) error) *cobra.Command {
	opts := &ReplayOptions{Factory: f}
	var (
		sel  selectionFlags
		dest destinationFlags
	)
	cmd := &cobra.Command{
		Use:   "replay QUEUE (--id ID… | --all | --filter EXPR) [--to EXCHANGE:ROUTING_KEY | --target origin|queue] [--rate N] [--canary N | --ramp 1,10,100] [--canary-wait D] [--dry-run] [--yes]\n  parkinglot replay --status RUN_ID [QUEUE]",
		Short: "Send parked messages back where they came from; each is removed only after the broker confirmed a routed copy",
		Args:  replayArgs(&opts.Status),
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.Status != "" {
				if err := checkStatus(cmd, args); err != nil {
					return err
				}
				return replayStatusRun(cmd.Context(), f, opts.Status, args)
			}
			choice, err := sel.selector()
			if err != nil {
				return err
			}
			to, target, err := dest.parse(cmd)
			if err != nil {
				return err
			}
			if err := checkRateWindow(opts.Rate, opts.Window); err != nil {
				return err
			}
			if err := opts.Canary.check(opts.DryRun); err != nil {
				return err
			}
			switch {
			case opts.Follow < 0:
				return usagef("--follow %v: want a positive duration (e.g. 2m)", opts.Follow)
			case opts.Follow > 0 && (opts.DryRun || len(opts.Canary.steps) > 0):
				return usagef("--follow tails a replay that sends: not with --dry-run or a canary (which waits for what comes back itself)")
			}
			if opts.ConfirmTimeout <= 0 {
				return usagef("--confirm-timeout %v: want a positive duration (e.g. 60s)", opts.ConfirmTimeout)
			}
			opts.Queue, opts.Select, opts.To, opts.Target = args[0], choice, to, target
			opts.RateFrom = "--rate"
			if !cmd.Flags().Changed("rate") {
				opts.Rate = f.Config.ParkingLots[opts.Queue].Rate
				opts.RateFrom = "from the config, parking_lots." + opts.Queue + ".rate"
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return replayRun(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	sel.register(cmd, true, "message id (message_id or sha256: content id); repeatable", "messages matching this expression (see parkinglot list --help)")
	dest.register(cmd, "send to EXCHANGE:ROUTING_KEY instead of the origin (\":queue\" for the default exchange)",
		"origin (the origin's exchange and routing key) or queue (only the queue that failed)")
	fl.Float64Var(&opts.Rate, "rate", 0, "at most N messages per second (default: the parking lot's rate in the config, else unlimited)")
	fl.BoolVar(&opts.DryRun, "dry-run", false, "show what would go where, change nothing")
	fl.BoolVar(&opts.Yes, "yes", false, "do not ask (needed without a terminal)")
	fl.IntVar(&opts.Window, "window", replay.DefaultWindow, "messages in flight (published, not yet confirmed and removed)")
	opts.Canary.register(fl)
	fl.StringVar(&opts.Status, "status", "", "tell what became of replay run RUN_ID (from the audit log): how many came back, by error; replays nothing")
	fl.DurationVar(&opts.Follow, "follow", 0, "tail the parking lot from the start until D after the end: which replayed messages came back, which new failures arrived")
	fl.DurationVar(&opts.ConfirmTimeout, "confirm-timeout", replay.DefaultConfirmTimeout, "stop when the broker confirms nothing this long with messages in flight (they stay parked, reported as outcome unknown)")
	return cmd
}

// checkRateWindow refuses a negative --rate or --window before anything
// is dialled.
func checkRateWindow(rate float64, window int) error {
	if !replay.RateOK(rate) {
		return usagef("--rate %v: want %v messages per second or more (0: as fast as confirms come)", rate, replay.MinRate)
	}
	if window < 0 {
		return usagef("--window %d: want 1 or more messages in flight (0: the default, %d)", window, replay.DefaultWindow)
	}
	return nil
}

func replayRun(ctx context.Context, opts *ReplayOptions) error {
	f := opts.Factory
	s, err := f.Session(ctx, "replay")
	if err != nil {
		return err
	}
	defer s.Close()
	o := opts.Options
	if opts.DryRun || !opts.Yes {
		plan, err := showPlan(ctx, f, s, o)
		if err != nil {
			return err
		}
		if line := format.RateLine(o.Rate, opts.RateFrom, plan.Chosen); line != "" && !f.JSON() {
			// A configured rate throttles silently otherwise.
			fmt.Fprintln(f.IOStreams.Out, line)
		}
		if opts.DryRun { // exits as the run would: 3 when any would stay parked
			return plan.Err()
		}
		if plan.Chosen == 0 {
			fmt.Fprintln(f.IOStreams.ErrOut, "nothing to replay")
			return plan.Err()
		}
		if err := confirm(ctx, f); err != nil {
			return err
		}
		// What the person agreed to: messages parked since arrive after
		// these and are not sent with them.
		o.Limit = plan.Chosen
	}
	if len(opts.Canary.steps) > 0 {
		return canaryRun(ctx, f, s, o, &opts.Canary)
	}
	var fo *follower
	if opts.Follow > 0 {
		o.Run = replay.NewRunID() // the copies that come back carry it
		if fo, err = startFollow(ctx, s, opts.Queue, o.Run, opts.Follow); err != nil {
			fmt.Fprintf(f.IOStreams.ErrOut, "--follow: %s is not followed: %s\n", format.Name(opts.Queue), firstLine(err.Error()))
		}
	}
	err = runAndReportLeft(ctx, f, f.IOStreams.Out, "replayed", stillParked(ctx, s, opts.Queue), func(progress func(replay.Event)) (replay.Result, error) {
		o.Progress = progress
		return s.Replay(ctx, o)
	})
	if fo != nil {
		rep := fo.finish(ctx, opts.Follow)
		if f.JSON() {
			if werr := WriteJSONLines(f.IOStreams.Out, []followed{rep}); werr != nil && err == nil {
				err = werr
			}
		} else {
			writeFollowed(f.IOStreams.Out, rep)
		}
	}
	return err
}
