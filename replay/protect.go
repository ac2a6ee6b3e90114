package replay

import (
	"context"
	"time"

	"github.com/parkinglot/parkinglot/broker"
)

// liftWait is how long Protect waits for the broker to apply its policy.
const liftWait = 10 * time.Second

// PlanProtect works out the policy that lifts a quorum parking lot's
// delivery limit (broker.PlanLiftLimit), or why none can
// (*broker.LiftError). It changes nothing.
func (s *Session) PlanProtect(ctx context.Context, queue string) (broker.LiftPlan, error) {
	m, err := s.Management(ctx)
	if err != nil {
		return broker.LiftPlan{}, err
	}
	conn, err := s.consumer(ctx)
	if err != nil {
		return broker.LiftPlan{}, err
	}
	return m.PlanLiftLimit(ctx, queue, conn.ServerVersion)
}

// Protect puts the plan's policy, with an audit entry (action "protect"),
// and returns the queue's delivery limit once the broker applied it. The
// entry is written whatever happened, with the error if any.
func (s *Session) Protect(ctx context.Context, p broker.LiftPlan) (broker.DeliveryLimit, error) {
	m, err := s.Management(ctx)
	if err != nil {
		return broker.DeliveryLimit{}, err
	}
	a, err := s.openAudit()
	if err != nil {
		return broker.DeliveryLimit{}, err
	}
	defer a.Close()
	limit, err := m.LiftLimit(ctx, p, liftWait)
	e := AuditEntry{Time: time.Now().UTC(), User: a.user, Action: "protect", Queue: p.Queue, Policy: p.Policy, Result: resultOK}
	if err != nil {
		e.Result, e.Error = resultFailed, err.Error()
	}
	if aerr := a.commit([]AuditEntry{e}); aerr != nil && err == nil {
		err = aerr
	}
	return limit, err
}
