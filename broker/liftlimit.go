package broker

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"regexp"
	"time"
)

// A quorum parking lot with a finite delivery limit drops a message once a
// lost connection of whoever holds it counts it past the limit, and on
// RabbitMQ 4.3 a message the delivery limit parked arrives one lost
// connection from it (x-delivery-count 21 against the default 20). The
// lasting fix is to lift the lot's limit: a policy with delivery-limit -1
// (4.0+; 3.x refuses -1 in a policy and has no default limit anyway). A
// queue takes one policy, the highest priority that matches, so the new
// one keeps every key of the policy it replaces and comes one above it.

// Policy is a policy as the management API reports it.
type Policy struct {
	Name       string         `json:"name"`
	Pattern    string         `json:"pattern"`
	ApplyTo    string         `json:"apply-to"`
	Priority   int            `json:"priority"`
	Definition map[string]any `json:"definition"`
}

// Policy reads one policy of the vhost.
func (m *Management) Policy(ctx context.Context, name string) (Policy, error) {
	var p Policy
	err := m.do(ctx, http.MethodGet, m.vpath("policies", name), nil, &p)
	return p, err
}

// LiftRefusal says why a queue's delivery limit cannot be lifted by a
// policy.
type LiftRefusal int

const (
	// LiftNotQuorum: only quorum queues have a delivery limit.
	LiftNotQuorum LiftRefusal = iota + 1
	// LiftAlreadyUnlimited: nothing to lift.
	LiftAlreadyUnlimited
	// LiftOldBroker: before 4.0 a policy cannot say -1 (the broker
	// refuses it) and an unset limit is none.
	LiftOldBroker
	// LiftArgument: the queue's x-delivery-limit argument sets it; the
	// smaller of argument and policy applies, so no policy lifts it.
	LiftArgument
	// LiftOperatorPolicy: an operator policy sets it, which a user policy
	// does not override.
	LiftOperatorPolicy
)

// String names the refusal for logs and the error's text; ui/format
// words it for people.
func (w LiftRefusal) String() string {
	switch w {
	case LiftNotQuorum:
		return "not-quorum"
	case LiftAlreadyUnlimited:
		return "already-unlimited"
	case LiftOldBroker:
		return "broker-before-4.0"
	case LiftArgument:
		return "set-by-argument"
	case LiftOperatorPolicy:
		return "set-by-operator-policy"
	}
	return "unknown"
}

// LiftError is a queue whose delivery limit no policy can lift.
type LiftError struct {
	Queue  string
	Why    LiftRefusal
	Limit  DeliveryLimit
	Server Version
}

func (e *LiftError) Error() string {
	return fmt.Sprintf("lift the delivery limit of %s: refused (%s)", e.Queue, e.Why)
}

// LiftPlan is the policy that lifts a quorum queue's delivery limit.
type LiftPlan struct {
	Queue    string
	Server   Version
	Limit    DeliveryLimit // the limit now
	Policy   string        // the policy to put
	Pattern  string        // the queue's name alone
	Priority int
	// Definition is the replaced policy's with delivery-limit -1.
	Definition map[string]any
	// Over is the policy that applies now, whose keys the new one keeps
	// ("" for none).
	Over string
}

// LiftPolicyName is the name of the policy that lifts queue's limit.
func LiftPolicyName(queue string) string { return "parkinglot-unlimited-" + queue }

// PlanLiftLimit works out the policy that makes queue's delivery limit
// unlimited, or why none can (*LiftError).
func (m *Management) PlanLiftLimit(ctx context.Context, queue string, server Version) (LiftPlan, error) {
	q, err := m.Queue(ctx, queue)
	if err != nil {
		return LiftPlan{}, err
	}
	limit := EffectiveDeliveryLimit(q, server)
	refuse := func(why LiftRefusal) (LiftPlan, error) {
		return LiftPlan{}, &LiftError{Queue: queue, Why: why, Limit: limit, Server: server}
	}
	_, argSet := toInt64(q.Arguments["x-delivery-limit"])
	switch {
	case q.Type != "quorum":
		return refuse(LiftNotQuorum)
	case limit.Unlimited():
		return refuse(LiftAlreadyUnlimited)
	case !server.AtLeast(4, 0, 0):
		return refuse(LiftOldBroker)
	case argSet:
		return refuse(LiftArgument)
	}
	p := LiftPlan{Queue: queue, Server: server, Limit: limit, Policy: LiftPolicyName(queue),
		Pattern: "^" + regexp.QuoteMeta(queue) + "$", Definition: map[string]any{}}
	if q.OperatorPolicy != "" {
		var op Policy
		if err := m.do(ctx, http.MethodGet, m.vpath("operator-policies", q.OperatorPolicy), nil, &op); err != nil {
			return LiftPlan{}, err
		}
		if _, set := toInt64(op.Definition["delivery-limit"]); set {
			return refuse(LiftOperatorPolicy)
		}
	}
	if q.Policy != "" {
		over, err := m.Policy(ctx, q.Policy)
		if err != nil {
			return LiftPlan{}, err
		}
		p.Over, p.Priority = over.Name, over.Priority+1
		maps.Copy(p.Definition, over.Definition)
	}
	p.Definition["delivery-limit"] = -1
	return p, nil
}

// LiftLimit puts p's policy and waits (at most wait) until the broker
// applies it: it returns the queue's delivery limit then.
func (m *Management) LiftLimit(ctx context.Context, p LiftPlan, wait time.Duration) (DeliveryLimit, error) {
	if err := m.PutPolicy(ctx, p.Policy, p.Pattern, "queues", p.Priority, p.Definition); err != nil {
		return DeliveryLimit{}, err
	}
	deadline := time.Now().Add(wait)
	for {
		q, err := m.Queue(ctx, p.Queue)
		if err != nil {
			return DeliveryLimit{}, err
		}
		l := EffectiveDeliveryLimit(q, p.Server)
		if l.Unlimited() || time.Now().After(deadline) {
			return l, nil
		}
		select {
		case <-ctx.Done():
			return l, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}
