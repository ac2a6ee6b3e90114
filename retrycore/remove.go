package retrycore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker"
)

// The roles of a pipeline's queues in a removal plan.
const (
	RoleMain       = "main"
	RoleDelay      = "delay"
	RoleOldDelay   = "old delay" // a delay queue of delays the file no longer has
	RoleParkingLot = "parking lot"
)

// PlannedQueue is one queue a removal would delete.
type PlannedQueue struct {
	Name string `json:"name"`
	Role string `json:"role"`
	// Exists is false for a queue of the file that is not there;
	// Messages is its depth (-1 when it could not be read).
	Exists   bool  `json:"exists"`
	Messages int64 `json:"messages"`
}

// RemovalPlan is what `topology delete` would remove: the pipeline's
// queues (the delay queues of delays the file no longer lists too, found
// by name and shape through the management API) and its exchanges.
type RemovalPlan struct {
	Pipeline  string         `json:"pipeline"`
	Queues    []PlannedQueue `json:"queues"`
	Exchanges []string       `json:"exchanges"`
	// OldDelaysUnknown: without the management API, old delay queues
	// cannot be found.
	OldDelaysUnknown bool `json:"old_delays_unknown,omitempty"`
}

// Held reports how many messages the plan's queues hold (what a forced
// removal would discard).
func (p RemovalPlan) Held() int64 {
	var n int64
	for _, q := range p.Queues {
		n += max(q.Messages, 0)
	}
	return n
}

// PlanRemoval works out what removing the pipeline would delete. It
// changes nothing; m may be nil.
func PlanRemoval(ctx context.Context, opts broker.Options, m *broker.Management, p Pipeline) (RemovalPlan, error) {
	if err := p.Validate(); err != nil {
		return RemovalPlan{}, err
	}
	plan := RemovalPlan{Pipeline: p.Name, Exchanges: []string{p.Main.Exchange, p.Retry.Exchange, p.Error.Exchange}}
	plan.Queues = append(plan.Queues, PlannedQueue{Name: p.Main.Queue, Role: RoleMain})
	for _, t := range p.Tiers() {
		plan.Queues = append(plan.Queues, PlannedQueue{Name: t.Queue, Role: RoleDelay + " " + t.Delay.Text})
	}
	plan.Queues = append(plan.Queues, PlannedQueue{Name: p.Error.Queue, Role: RoleParkingLot})
	if m == nil {
		plan.OldDelaysUnknown = true
		return plan, countQueues(ctx, opts, &plan)
	}
	all, err := m.Queues(ctx)
	if err != nil {
		return plan, err
	}
	byName := map[string]broker.QueueInfo{}
	for _, q := range all {
		byName[q.Name] = q
		if isOldDelay(p, q) && !slices.ContainsFunc(plan.Queues, func(pq PlannedQueue) bool { return pq.Name == q.Name }) {
			plan.Queues = append(plan.Queues, PlannedQueue{Name: q.Name, Role: RoleOldDelay + " " + strings.TrimPrefix(q.Name, p.Name+".retry.")})
		}
	}
	for i := range plan.Queues {
		q := &plan.Queues[i]
		info, ok := byName[q.Name]
		// Ready and held (a running daemon's) alike.
		q.Exists, q.Messages = ok, info.Messages
	}
	return plan, nil
}

// countQueues reads each queue's ready messages with a passive declare
// (without the management API).
func countQueues(ctx context.Context, opts broker.Options, plan *RemovalPlan) error {
	conn, err := broker.Dial(ctx, opts)
	if err != nil {
		return err
	}
	defer conn.Close()
	for i := range plan.Queues {
		q := &plan.Queues[i]
		q.Messages = -1
		err := withChannel(conn, func(ch *amqp.Channel) error {
			n, err := broker.ReadyCount(ch, q.Name)
			if err == nil {
				q.Exists, q.Messages = true, int64(n)
			}
			return err
		})
		switch {
		case errors.Is(err, broker.ErrNotFound):
			q.Messages = 0
		case err != nil:
			return err
		}
	}
	return nil
}

// isOldDelay: a queue named like the pipeline's delay queues whose shape
// is one (a TTL, dead-lettering back to the main exchange).
func isOldDelay(p Pipeline, q broker.QueueInfo) bool {
	if !strings.HasPrefix(q.Name, p.Name+".retry.") {
		return false
	}
	_, ttl := q.Arguments["x-message-ttl"]
	dlx, _ := q.Arguments["x-dead-letter-exchange"].(string)
	return ttl && dlx == p.Main.Exchange
}

// ErrKept: a removal kept some of what it was asked to delete (a queue
// that holds messages, an exchange others are bound to); the report says
// which.
var ErrKept = errors.New("some of the pipeline was kept")

// KeptReason says why a removal kept a queue or an exchange.
type KeptReason string

const (
	KeptNotEmpty  KeptReason = "not-empty" // the queue holds messages
	KeptConsumers KeptReason = "consumers" // the queue has consumers (ReportEntry.Consumers)
	KeptBound     KeptReason = "bound"     // something else is bound to the exchange
)

// Removal statuses.
const (
	StatusDeleted = "deleted"
	StatusKept    = "kept"   // not empty (queue) or still bound by others (exchange)
	StatusAbsent  = "absent" // not there to delete
)

// Remove deletes what the plan lists: each queue only while empty (the
// broker checks, at the moment of the delete) unless force, then each
// exchange only when nothing else is bound to it. What is kept is said,
// with why; nothing a queue holds is discarded without force.
func Remove(ctx context.Context, opts broker.Options, plan RemovalPlan, force bool) (Report, error) {
	conn, err := broker.Dial(ctx, opts)
	if err != nil {
		return Report{}, err
	}
	defer func() { conn.Close() }()
	rep := Report{Pipeline: plan.Pipeline, Server: conn.ServerVersion.String()}
	// checkFirst: the broker refused if-empty (quorum queues do, with a
	// connection error that closes the connection): checked instead.
	checkFirst := false
	for _, q := range plan.Queues {
		e := ReportEntry{Kind: KindQueue, Name: q.Name, Detail: q.Role}
		deleted := func(n int) { e.Status, e.Discarded = StatusDeleted, n }
		var err error
		if !checkFirst || force {
			var raw *amqp.Error
			err = withChannel(conn, func(ch *amqp.Channel) error {
				n, err := ch.QueueDelete(q.Name,
					false,  // ifUnused: a consumer of it (the daemon) is the user's to stop
					!force, // ifEmpty: the broker refuses to delete a queue that holds messages
					false)  // noWait
				if err == nil {
					deleted(n)
				}
				errors.As(err, &raw)
				return err
			})
			if raw != nil && raw.Code == amqp.NotImplemented {
				checkFirst = true
				conn.Close()
				if conn, err = broker.Dial(ctx, opts); err != nil {
					return rep, err
				}
			}
		}
		if checkFirst && !force {
			// Quorum queues refuse if-empty: empty and without consumers
			// (whose unacknowledged messages a count of the ready ones
			// misses) just before the delete instead.
			err = withChannel(conn, func(ch *amqp.Channel) error {
				ready, consumers, err := broker.QueueCounts(ch, q.Name)
				switch {
				case err != nil:
					return err
				case ready > 0:
					e.Status, e.Kept = StatusKept, KeptNotEmpty
					return nil
				case consumers > 0:
					e.Status, e.Kept, e.Consumers = StatusKept, KeptConsumers, consumers
					return nil
				}
				n, err := ch.QueueDelete(q.Name, false, false, false)
				if err == nil {
					deleted(n)
				}
				return err
			})
		}
		switch {
		case err == nil:
		case errors.Is(err, broker.ErrNotFound):
			e.Status = StatusAbsent
		case errors.Is(err, broker.ErrPreconditionFailed):
			e.Status, e.Kept = StatusKept, KeptNotEmpty
		default:
			return rep, err
		}
		rep.Entries = append(rep.Entries, e)
	}
	for _, ex := range plan.Exchanges {
		e := ReportEntry{Kind: KindExchange, Name: ex}
		err := withChannel(conn, func(ch *amqp.Channel) error {
			return ch.ExchangeDelete(ex,
				true,  // ifUnused: another pipeline's or service's bindings keep it
				false) // noWait
		})
		switch {
		case err == nil:
			e.Status = StatusDeleted
		case errors.Is(err, broker.ErrNotFound):
			e.Status = StatusAbsent
		case errors.Is(err, broker.ErrPreconditionFailed):
			e.Status, e.Kept = StatusKept, KeptBound
		default:
			return rep, err
		}
		rep.Entries = append(rep.Entries, e)
	}
	if err := ctx.Err(); err != nil {
		return rep, err
	}
	for _, e := range rep.Entries {
		if e.Status == StatusKept {
			return rep, ErrKept
		}
	}
	return rep, nil
}

// withChannel runs do on a channel of its own: a refused delete closes
// its channel.
func withChannel(conn *broker.Conn, do func(*amqp.Channel) error) error {
	ch, err := conn.Channel()
	if err != nil {
		return fmt.Errorf("open channel: %w", broker.Explain(err))
	}
	defer conn.CloseChannel(ch)
	if err := do(ch); err != nil {
		return broker.Explain(err)
	}
	return nil
}
