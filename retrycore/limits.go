package retrycore

import (
	"context"
	"sync"

	"github.com/parkinglot/parkinglot/broker"
)

// DeliveryLimits looks up the delivery limit a quorum queue applies, for the
// attempts of a message it dead-lettered with reason delivery_limit.
type DeliveryLimits interface {
	DeliveryLimit(ctx context.Context, queue string) (broker.DeliveryLimit, error)
}

// QueueInfos reads a queue as the management API reports it
// (*broker.Management implements it).
type QueueInfos interface {
	Queue(ctx context.Context, name string) (broker.QueueInfo, error)
}

// NewDeliveryLimits returns DeliveryLimits over the management API: the
// effective limit (x-delivery-limit argument, policy, operator policy, the
// 4.x default) as broker.EffectiveDeliveryLimit works it out for server,
// cached per queue for the DeliveryLimits' life.
func NewDeliveryLimits(q QueueInfos, server broker.Version) DeliveryLimits {
	return &limitCache{q: q, server: server, m: map[string]limitAnswer{}}
}

type limitAnswer struct {
	l   broker.DeliveryLimit
	err error
}

type limitCache struct {
	q      QueueInfos
	server broker.Version
	mu     sync.Mutex
	m      map[string]limitAnswer
}

func (c *limitCache) DeliveryLimit(ctx context.Context, queue string) (broker.DeliveryLimit, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if a, ok := c.m[queue]; ok {
		return a.l, a.err
	}
	info, err := c.q.Queue(ctx, queue)
	var l broker.DeliveryLimit
	if err == nil {
		l = broker.EffectiveDeliveryLimit(info, c.server)
	}
	if ctx.Err() == nil {
		c.m[queue] = limitAnswer{l, err}
	}
	return l, err
}
