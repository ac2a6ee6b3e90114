package cli

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/parkinglot/parkinglot/replay"
	"github.com/parkinglot/parkinglot/ui/format"
)

// replayStatusFlags are the flags --status cannot go with: it reads a run,
// it replays nothing.
var replayStatusFlags = []string{"id", "all", "filter", "to", "target", "rate", "dry-run", "yes", "window",
	"canary", "ramp", "canary-wait", "pipeline", "confirm-timeout"}

// checkStatus refuses --status with a flag of a replay, or with more than
// one QUEUE.
func checkStatus(cmd *cobra.Command, args []string) error {
	for _, name := range replayStatusFlags {
		if cmd.Flags().Changed(name) {
			return usagef("--status tells what became of a run and replays nothing; --%s goes with a replay", name)
		}
	}
	if len(args) > 1 {
		return usagef("--status RUN_ID [QUEUE]: at most one parking lot to look in")
	}
	return nil
}

// replayStatusRun is `parkinglot replay --status RUN_ID [QUEUE]`: what the
// audit log says the run replayed, and how many of those came back to the
// parking lot (QUEUE, else those it replayed from), by error group.
func replayStatusRun(ctx context.Context, f *Factory, run string, queues []string) error {
	s, err := f.Session(ctx, "replay status")
	if err != nil {
		return err
	}
	defer s.Close()
	st, err := s.RunStatus(ctx, run, queues)
	if err != nil {
		return err
	}
	if f.JSON() {
		return WriteJSONLines(f.IOStreams.Out, []statusJSON{newStatusJSON(st)})
	}
	_, err = fmt.Fprint(f.IOStreams.Out, RunStatusText(st))
	notes(f, format.Notes(st.Notes))
	return err
}

// RunStatusText is a run's status for people: "run R: 500 replayed from
// payment.error.dlq at 2026-12-05T10:02:00Z" then "3 came back to
// payment.error.dlq, all upstream ledger unavailable (3 with the same error
// as before)".
func RunStatusText(st replay.RunStatus) string {
	var b strings.Builder
	fmt.Fprintf(&b, "run %s: %d replayed from %s at %s", st.Run, st.Replayed, strings.Join(st.From, ", "), format.Time(st.First))
	if st.Last.Sub(st.First) >= time.Second {
		fmt.Fprintf(&b, " to %s", format.Time(st.Last))
	}
	if st.NotDone > 0 {
		fmt.Fprintf(&b, ", %d not done (still parked)", st.NotDone)
	}
	b.WriteString("\n")
	where := strings.Join(st.Watched, ", ")
	if st.CameBack == 0 {
		fmt.Fprintf(&b, "none came back to %s\n", where)
		return b.String()
	}
	fmt.Fprintf(&b, "%d came back to %s", st.CameBack, where)
	groups := slices.Sorted(maps.Keys(st.Groups))
	if len(groups) == 1 {
		fmt.Fprintf(&b, ", all %s", groupText(groups[0]))
	} else {
		parts := make([]string, len(groups))
		for i, g := range groups {
			parts[i] = fmt.Sprintf("%d × %s", st.Groups[g], groupText(g))
		}
		fmt.Fprintf(&b, ": %s", strings.Join(parts, "; "))
	}
	fmt.Fprintf(&b, " (%d with the same error as before)\n", st.SameError)
	return b.String()
}

// groupText is an error group for a line of text.
func groupText(g string) string {
	if g == "" {
		return "(no error recorded)"
	}
	return format.OneLine(g)
}

// replayArgs is QUEUE, or with --status an optional QUEUE.
func replayArgs(status *string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if *status != "" {
			return nil // checkStatus
		}
		return oneArg(cmd, args)
	}
}
