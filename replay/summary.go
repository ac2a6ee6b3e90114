package replay

import (
	"context"
	"sync"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/retrycore"
)

// Summarize decodes one message through retrycore: its facts (deaths,
// attempts, error), where a replay would send it, and its error group.
func Summarize(ctx context.Context, m broker.Message, q retrycore.OriginQuery) Summary {
	s := summarize(ctx, m, m.ID(), q)
	s.Group = retrycore.GroupKey(s.Facts.Error)
	return s
}

// summarize is Summarize without the error group (six regular expressions
// per message, which a replay of 100k messages does not need).
func summarize(ctx context.Context, m broker.Message, id string, q retrycore.OriginQuery) Summary {
	f := retrycore.DecodeWith(ctx, m.Headers, q.Limits)
	s := Summary{
		ID:          id,
		Exchange:    m.Exchange,
		RoutingKey:  m.RoutingKey,
		ContentType: m.Properties.ContentType,
		BodySize:    len(m.Body),
		Redelivered: m.Redelivered,
		Facts:       f,
		ParkedAt:    f.ParkedAt,
	}
	if s.ParkedAt.IsZero() {
		s.ParkedAt = m.Properties.Timestamp
	}
	o, err := retrycore.ResolveOriginOf(ctx, m.Headers, f, q)
	if err != nil {
		s.OriginErr, s.originErr = err.Error(), err
	} else {
		s.Origin = &o
	}
	return s
}

// originQuery is the session's origin query for a parking lot: the --to
// override, the configured default, queue arguments through a cache (a
// 100k-message parking lot would otherwise ask the management API for the
// same delay queue 100k times), and the delivery limits of quorum queues,
// so a message dead-lettered by one has its exact attempts (the limit + 1
// a death), not a lower bound.
func (s *Session) originQuery(ctx context.Context, queue string, to *retrycore.Destination) retrycore.OriginQuery {
	q := retrycore.OriginQuery{Override: to, Default: s.cfg.DefaultDestination(queue), ParkingLot: queue}
	if m := s.optionalManagement(ctx); m != nil {
		q.Queues = &queueArgsCache{m: m, args: map[string]queueArgs{}}
		q.Limits = retrycore.NewDeliveryLimits(m, s.serverVersion())
	}
	return q
}

// serverVersion is the RabbitMQ version the consuming connection reports
// (unknown before it is dialled: read as 4.x, as the delivery limit rules
// do).
func (s *Session) serverVersion() broker.Version {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.consume != nil {
		return s.consume.ServerVersion
	}
	return broker.Version{}
}

type queueArgs struct {
	args amqp.Table
	err  error
}

// queueArgsCache implements retrycore.QueueArgs for one run.
type queueArgsCache struct {
	m    *broker.Management
	mu   sync.Mutex
	args map[string]queueArgs
}

func (c *queueArgsCache) QueueArguments(ctx context.Context, queue string) (amqp.Table, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if a, ok := c.args[queue]; ok {
		return a.args, a.err
	}
	args, err := c.m.QueueArguments(ctx, queue)
	if ctx.Err() == nil { // a cancelled lookup says nothing about the queue
		c.args[queue] = queueArgs{args, err}
	}
	return args, err
}
