package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/ui/format"
)

// ProtectOptions are `parkinglot protect`'s.
type ProtectOptions struct {
	*Factory
	Queue string
	Yes   bool
}

// NewCmdProtect is `parkinglot protect QUEUE [--yes]`.
func NewCmdProtect(f *Factory, runF func(context.Context, *ProtectOptions) error) *cobra.Command {
	opts := &ProtectOptions{Factory: f}
	cmd := &cobra.Command{
		Use:   "protect QUEUE [--yes]",
		Short: "Lift a quorum parking lot's delivery limit with a policy, so that no lost connection drops a parked message",
		Long: `Lift a quorum parking lot's delivery limit with a policy (delivery-limit -1,
RabbitMQ 4.0+). A lost connection of whoever holds a message counts toward
the limit, and RabbitMQ 4.3 carries the count of a message the delivery
limit parked into the parking lot (21 against the default 20): one lost
connection drops it. The policy matches the queue's name alone, comes one
priority above the policy in force and keeps its other keys. Asks first
(--yes without a terminal); the change goes into the audit log.`,
		Args: oneArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Queue = args[0]
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return protectRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.Yes, "yes", false, "do not ask (needed without a terminal)")
	return cmd
}

// protectJSON is protect's -o json line.
type protectJSON struct {
	Queue    string `json:"queue"`
	Policy   string `json:"policy,omitempty"`
	Priority int    `json:"priority"`
	Over     string `json:"replaces,omitempty"`
	Changed  bool   `json:"changed"`
	// Limit is the delivery limit now: a number, or -1 for unlimited.
	Limit       int64  `json:"delivery_limit"`
	LimitSource string `json:"delivery_limit_source"`
}

func limitNumber(l broker.DeliveryLimit) int64 {
	if l.Unlimited() {
		return -1
	}
	return l.Limit
}

func protectRun(ctx context.Context, opts *ProtectOptions) error {
	f := opts.Factory
	out := f.IOStreams.Out
	s, err := f.Session(ctx, "protect")
	if err != nil {
		return err
	}
	defer s.Close()
	plan, err := s.PlanProtect(ctx, opts.Queue)
	var le *broker.LiftError
	if errors.As(err, &le) {
		if le.Why != broker.LiftNotQuorum && le.Why != broker.LiftAlreadyUnlimited {
			return errors.New(format.LiftRefused(le))
		}
		if f.JSON() { // nothing to do: the queue is safe as it is
			return WriteJSONLines(out, []protectJSON{{Queue: opts.Queue, Limit: limitNumber(le.Limit), LimitSource: le.Limit.Source}})
		}
		_, err := fmt.Fprintln(out, format.LiftRefused(le))
		return err
	}
	if err != nil {
		return err
	}
	if !f.JSON() {
		for _, l := range format.LiftPlan(plan) {
			fmt.Fprintln(out, l)
		}
	}
	if !opts.Yes {
		if err := confirm(ctx, f); err != nil {
			return err
		}
	}
	limit, err := s.Protect(ctx, plan)
	if err != nil {
		return err
	}
	if !limit.Unlimited() {
		return fmt.Errorf("policy %q is in place, but the broker had not applied it after 10s: the delivery limit of %s is %s", plan.Policy, plan.Queue, format.Limit(limit))
	}
	if f.JSON() {
		return WriteJSONLines(out, []protectJSON{{Queue: plan.Queue, Policy: plan.Policy, Priority: plan.Priority, Over: plan.Over,
			Changed: true, Limit: -1, LimitSource: limit.Source}})
	}
	_, err = fmt.Fprintf(out, "protected %s: delivery limit %s, by policy %q\n", plan.Queue, format.Limit(limit), plan.Policy)
	return err
}
