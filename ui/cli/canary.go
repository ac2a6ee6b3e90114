package cli

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/parkinglot/parkinglot/replay"
	"github.com/parkinglot/parkinglot/retrycore"
)

// canaryFlags are replay's --canary, --ramp, --canary-wait and --pipeline.
type canaryFlags struct {
	N        int
	Ramp     string
	Wait     time.Duration
	Pipeline string
	steps    []int
	fl       *pflag.FlagSet // to tell --canary 0 from no --canary
}

func (c *canaryFlags) register(fl *pflag.FlagSet) {
	c.fl = fl
	fl.IntVar(&c.N, "canary", 0, "replay the first N messages, wait for them to come back or not, then the rest")
	fl.StringVar(&c.Ramp, "ramp", "", "canary steps before the rest, e.g. 1,10,100")
	fl.DurationVar(&c.Wait, "canary-wait", 0, "how long each canary step is watched (default: from --pipeline's retry schedule, else "+replay.DefaultCanaryWait.String()+")")
	fl.StringVar(&c.Pipeline, "pipeline", "", "the pipeline file of the parking lot's consumer, for --canary-wait's default")
}

// check reads the flags into steps; no canary is no steps.
func (c *canaryFlags) check(dryRun bool) error {
	switch {
	case c.N < 0, c.N == 0 && c.fl != nil && c.fl.Changed("canary"):
		return usagef("--canary %d: want 1 or more messages", c.N)
	case c.N > 0 && c.Ramp != "":
		return usagef("--canary and --ramp both say how to start; give one")
	case c.Wait < 0:
		return usagef("--canary-wait %v: want a positive duration", c.Wait)
	case c.N > 0:
		c.steps = []int{c.N}
	case c.Ramp != "":
		steps, err := replay.ParseRamp(c.Ramp)
		if err != nil {
			// The engine's "bad selection: ramp …" in the flag's name: a
			// ramp says how to send, not which messages.
			return usagef("--%s", strings.TrimPrefix(err.Error(), replay.ErrBadSelection.Error()+": "))
		}
		c.steps = steps
	}
	if len(c.steps) > 0 && dryRun {
		return usagef("--dry-run shows the whole replay; a canary cannot be previewed")
	}
	if len(c.steps) == 0 && (c.Wait != 0 || c.Pipeline != "") {
		return usagef("--canary-wait and --pipeline go with --canary or --ramp")
	}
	return nil
}

// wait is --canary-wait, else the pipeline's worst time to park, else the
// default.
func (c *canaryFlags) wait() (time.Duration, string, error) {
	switch {
	case c.Wait > 0:
		return c.Wait, "--canary-wait", nil
	case c.Pipeline != "":
		p, err := retrycore.LoadPipeline(c.Pipeline)
		if err != nil {
			return 0, "", &UsageError{err}
		}
		return replay.CanaryWaitFor(p), "the retry schedule of " + c.Pipeline, nil
	}
	return replay.DefaultCanaryWait, "the default", nil
}

// canaryJSON is the -o json line of a canary step.
type canaryJSON struct {
	Event string `json:"event"` // "canary"
	replay.CanaryStep
}

// canaryRun replays o step by step (replay.Session.Canary) and tells each
// step's outcome.
func canaryRun(ctx context.Context, f *Factory, s Session, o replay.Options, c *canaryFlags) error {
	wait, from, err := c.wait()
	if err != nil {
		return err
	}
	errOut := f.IOStreams.ErrOut
	if o.Run == "" {
		o.Run = replay.NewRunID()
	}
	if !f.JSON() {
		fmt.Fprintf(errOut, "canary run %s: %s, each watched for up to %s (%s)\n", o.Run, stepsText(c.steps), wait, from)
	}
	return runAndReportWith(ctx, f, f.IOStreams.Out, "replayed", stillParked(ctx, s, o.Queue), func(pp *ProgressPrinter) (replay.Result, error) {
		co := replay.CanaryOptions{Options: o, Steps: c.steps, Wait: wait}
		co.Progress = pp.Event
		co.OnStep = func(st replay.CanaryStep) {
			if f.JSON() {
				pp.Line(canaryJSON{Event: "canary", CanaryStep: st})
				return
			}
			if f.IOStreams.IsTerminal() {
				fmt.Fprint(errOut, "\r\x1b[K") // the countdown's line
			}
			fmt.Fprintln(errOut, canaryLine(st))
		}
		if f.JSON() {
			// The step's events are out before its wait, which can be long.
			co.OnWait = func(time.Duration, replay.CanaryStep) { pp.Flush() }
		}
		if f.IOStreams.IsTerminal() && !f.JSON() {
			co.OnWait = func(left time.Duration, st replay.CanaryStep) {
				fmt.Fprintf(errOut, "\r\x1b[Kcanary step %d: %d replayed, waiting %s more, %d came back so far", st.Step, st.Replayed, left.Round(time.Second), st.CameBack)
			}
		}
		res, _, err := s.Canary(ctx, co)
		return res, err
	})
}

func stepsText(steps []int) string {
	parts := make([]string, len(steps))
	for i, n := range steps {
		parts[i] = fmt.Sprint(n)
	}
	return "steps of " + strings.Join(parts, ", ") + " before the rest"
}

// canaryLine is a step's outcome for people.
func canaryLine(st replay.CanaryStep) string {
	if st.CameBack == 0 {
		return fmt.Sprintf("canary step %d: %d replayed, none came back in %s", st.Step, st.Replayed, st.Waited.Round(time.Second)) + earlierWatched(st)
	}
	var groups []string
	for _, g := range slices.Sorted(maps.Keys(st.Groups)) {
		groups = append(groups, fmt.Sprintf("%d × %s", st.Groups[g], g))
	}
	of := fmt.Sprint(st.Replayed)
	if st.Watched > st.Replayed {
		of = fmt.Sprintf("%d replayed by steps 1–%d", st.Watched, st.Step)
	}
	return fmt.Sprintf("canary step %d: %d of %s came back: %s; the rest stay parked", st.Step, st.CameBack, of, strings.Join(groups, "; "))
}

// earlierWatched says, after a later step, that the earlier steps' copies
// were watched too.
func earlierWatched(st replay.CanaryStep) string {
	if n := st.Watched - st.Replayed; n > 0 {
		return fmt.Sprintf(" (nor any of the %d before)", n)
	}
	return ""
}
