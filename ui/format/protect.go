package format

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/parkinglot/parkinglot/broker"
)

// Limit is a delivery limit for people: "20 (RabbitMQ 4.3.6 default)",
// "unlimited (delivery limit disabled (-1))".
func Limit(l broker.DeliveryLimit) string {
	if l.Unlimited() {
		return "unlimited (" + l.Source + ")"
	}
	return fmt.Sprintf("%d (%s)", l.Limit, l.Source)
}

// LiftPlan says what `protect` will do, one line each.
func LiftPlan(p broker.LiftPlan) []string {
	lines := []string{
		fmt.Sprintf("%s: delivery limit %s", p.Queue, Limit(p.Limit)),
		"  a lost connection of whoever holds a message counts toward it (RabbitMQ 4.3 carries a message's count into the parking lot): one that reaches it is dropped",
		fmt.Sprintf("will put policy %q (pattern %s, priority %d, apply-to queues) with delivery-limit -1", p.Policy, p.Pattern, p.Priority),
	}
	if p.Over != "" {
		var keys []string
		for _, k := range slices.Sorted(maps.Keys(p.Definition)) {
			if k != "delivery-limit" {
				keys = append(keys, fmt.Sprintf("%s=%v", k, p.Definition[k]))
			}
		}
		kept := "none"
		if len(keys) > 0 {
			kept = strings.Join(keys, ", ")
		}
		lines = append(lines, fmt.Sprintf("  in place of policy %q, whose other keys it keeps: %s", p.Over, kept))
	}
	return lines
}

// LiftRefused words why no policy lifts a queue's delivery limit.
func LiftRefused(e *broker.LiftError) string {
	switch e.Why {
	case broker.LiftNotQuorum:
		return fmt.Sprintf("%s is not a quorum queue: it has no delivery limit, nothing to do", e.Queue)
	case broker.LiftAlreadyUnlimited:
		return fmt.Sprintf("%s: delivery limit already %s, nothing to do", e.Queue, Limit(e.Limit))
	case broker.LiftOldBroker:
		return fmt.Sprintf("%s: delivery limit %s stays: RabbitMQ %s refuses -1 in a policy (and takes a -1 argument literally); move the messages to a quorum queue declared without a limit (export --remove, import)", e.Queue, Limit(e.Limit), e.Server)
	case broker.LiftArgument:
		return fmt.Sprintf("%s: delivery limit %s: the smaller of the argument and a policy applies, so no policy lifts it; move the messages to a queue declared with x-delivery-limit -1 (export --remove, import)", e.Queue, Limit(e.Limit))
	case broker.LiftOperatorPolicy:
		return fmt.Sprintf("%s: delivery limit %s is an operator policy's, which a user policy does not override: ask the broker's administrator to lift it", e.Queue, Limit(e.Limit))
	}
	return e.Error()
}

// LimitRisk is `queues`' line for a parking lot with a finite delivery
// limit.
func LimitRisk(queue string, limit int64) string {
	return fmt.Sprintf("at risk: %s has delivery limit %d: a lost connection of whoever holds a message counts toward it (on RabbitMQ 4.3 a message the limit parked arrives one from it); parkinglot protect %s lifts it", Name(queue), limit, Name(queue))
}

// LimitRiskBrief is the TUI dashboard's line for a selected parking lot
// with a finite delivery limit (LimitRisk in one line's room).
func LimitRiskBrief(queue string, limit int64) string {
	return fmt.Sprintf("! delivery limit %d, a lost connection counts: parkinglot protect %s", limit, Name(queue))
}
