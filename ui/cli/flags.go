package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/parkinglot/parkinglot/replay"
	"github.com/parkinglot/parkinglot/retrycore"
	"github.com/parkinglot/parkinglot/ui/format"
)

// selectorFromFlags checks --id/--all/--filter: exactly one (mutually
// exclusive), and --all only where allowAll. Errors wrap ErrBadSelection
// or ErrBadFilter (usage errors).
func selectorFromFlags(ids []string, all bool, filter string, allowAll bool) (replay.Selector, error) {
	n := 0
	for _, set := range []bool{len(ids) > 0, all, filter != ""} {
		if set {
			n++
		}
	}
	choose := "--id or --filter"
	if allowAll {
		choose = "--id, --all or --filter"
	}
	switch {
	case n == 0:
		return replay.Selector{}, fmt.Errorf("%w: choose the messages with %s", replay.ErrBadSelection, choose)
	case n > 1:
		return replay.Selector{}, fmt.Errorf("%w: %s are mutually exclusive; give one", replay.ErrBadSelection, choose)
	case all && !allowAll:
		return replay.Selector{}, fmt.Errorf("%w: choose the messages with %s", replay.ErrBadSelection, choose)
	}
	if _, err := replay.CompileFilter(filter); err != nil {
		return replay.Selector{}, err
	}
	return replay.Selector{IDs: ids, All: all, Filter: filter}, nil
}

// selectionFlags are --id, --filter and, where a command takes it, --all:
// registered here once for every command that chooses messages.
type selectionFlags struct {
	ids    []string
	all    bool
	filter string
}

func (s *selectionFlags) register(cmd *cobra.Command, withAll bool, idHelp, filterHelp string) {
	cmd.Flags().StringArrayVar(&s.ids, "id", nil, idHelp)
	if withAll {
		cmd.Flags().BoolVar(&s.all, "all", false, "every message in the queue")
	}
	cmd.Flags().StringVar(&s.filter, "filter", "", filterHelp)
}

// selector is the one choice delete and replay need (selectorFromFlags).
func (s *selectionFlags) selector() (replay.Selector, error) {
	sel, err := selectorFromFlags(s.ids, s.all, s.filter, true)
	if err != nil {
		return replay.Selector{}, cliErr(err)
	}
	return sel, nil
}

// narrowing is export's optional choice: --id or --filter, or neither for
// every message.
func (s *selectionFlags) narrowing() (replay.Selector, error) {
	if s.filter != "" && len(s.ids) > 0 {
		return replay.Selector{}, usagef("--id and --filter are mutually exclusive; give one")
	}
	if _, err := replay.CompileFilter(s.filter); err != nil {
		return replay.Selector{}, cliErr(err)
	}
	return replay.Selector{IDs: s.ids, Filter: s.filter}, nil
}

// destinationFlag parses --to: nil when it was not given. A --to given
// empty (an unset shell variable) is refused rather than read as no --to:
// the messages would go somewhere the caller did not say. without is
// where they go without --to, for the hint.
func destinationFlag(cmd *cobra.Command, s, without string) (*retrycore.Destination, error) {
	if !cmd.Flags().Changed("to") {
		return nil, nil
	}
	d, err := retrycore.ParseDestination(s)
	if err != nil {
		hint := ""
		if s == "" {
			hint = "; leave --to out to send " + without
		}
		return nil, usagef("--to %w%s", err, hint)
	}
	return &d, nil
}

// destinationFlags are --to and --target, checked by the engine's one rule
// (replay.CheckDestination) that the TUI's dialog uses too.
type destinationFlags struct {
	to, target string
}

func (d *destinationFlags) register(cmd *cobra.Command, toHelp, targetHelp string) {
	cmd.Flags().StringVar(&d.to, "to", "", toHelp)
	cmd.Flags().StringVar(&d.target, "target", string(replay.TargetOrigin), targetHelp)
}

// parse is the destination and target the flags say; the target is ""
// (the origin) when --target was not given.
func (d *destinationFlags) parse(cmd *cobra.Command) (*retrycore.Destination, replay.Target, error) {
	to, err := destinationFlag(cmd, d.to, "each message to its origin")
	if err != nil {
		return nil, "", err
	}
	target := replay.Target("")
	if cmd.Flags().Changed("target") {
		target = replay.Target(d.target)
	}
	if err := replay.CheckDestination(to, target); err != nil {
		if errors.Is(err, replay.ErrBadTarget) {
			return nil, "", usagef("--target %q: use origin or queue", d.target)
		}
		return nil, "", destinationErr(err)
	}
	return to, target, nil
}

// destinationErr names the flags that mend an engine destination error.
func destinationErr(err error) error {
	switch {
	case errors.Is(err, replay.ErrTwoDestinations):
		return usagef("--to and --target both say where to send; give one")
	}
	return cliErr(err)
}

// failureHints are the flags that mend a per-message failure on the
// command line, by its code.
var failureHints = map[replay.FailureCode]string{
	replay.CodeFailedQueueUnknown: "; use --to or --target origin",
	replay.CodeUnknownOrigin:      "; pass --to",
}

func hintFailures(fs []replay.Failure) []replay.Failure {
	if len(fs) == 0 {
		return fs
	}
	out := make([]replay.Failure, len(fs))
	for i, f := range fs {
		out[i] = hintFailure(f)
	}
	return out
}

// hintFailure adds the flag that mends a failure to its reason.
func hintFailure(f replay.Failure) replay.Failure {
	f.Err += failureHints[f.Code]
	return f
}

// The command line names the sources the engine describes by the flag
// that chose them.
const (
	targetQueueSource = "--target queue" // replay.SourceTargetQueue
	overrideSource    = "--to"           // retrycore.SourceOverride
)

// hintPlan adds the flags to a plan: the one that chose a destination, the
// one that keeps a route from reaching other queues, the one that mends a
// refusal.
func hintPlan(p replay.Plan) replay.Plan {
	p.Refused = hintFailures(p.Refused)
	if len(p.Items) > 0 {
		items := make([]replay.PlanItem, len(p.Items))
		for i, it := range p.Items {
			items[i] = hintItem(it)
		}
		p.Items = items
	}
	if len(p.Routes) > 0 {
		routes := make([]replay.RoutePreview, len(p.Routes))
		for i, r := range p.Routes {
			r = format.WordRoute(r)
			if r.Warning != "" && len(r.OtherQueues()) > 0 {
				r.Warning += "; " + targetQueueSource + " sends them to " + strings.Join(r.FailedQueues, ", ") + " alone"
			}
			if r.Unavailable != nil {
				r.Err += hintFor(r.Unavailable)
			}
			routes[i] = r
		}
		p.Routes = routes
	}
	return p
}

// hintItem names the flag that chose an item's destination.
func hintItem(it replay.PlanItem) replay.PlanItem {
	switch it.Source {
	case replay.SourceTargetQueue:
		it.Source = targetQueueSource
	case retrycore.SourceOverride:
		it.Source = overrideSource
	}
	return it
}

func hintResult(r replay.Result) replay.Result {
	r.Failures = hintFailures(r.Failures)
	return r
}
