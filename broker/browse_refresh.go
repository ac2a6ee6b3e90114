package broker

import (
	"context"
	"slices"
	"time"
)

// mustRefresh: a give-back makes the count c+1, and RabbitMQ drops a message
// whose count passes the limit (measured on 3.10.8: limit 3 kept it through
// count 3 and dropped it on the 4th give-back). Keep one give-back spare for
// a connection lost while the message is held.
func (p *Pass) mustRefresh(h *Held) bool {
	f := p.facts
	switch {
	case f.DelayedRetry.DelaysNack():
		// A give-back would hide the message for the delay: the next pass
		// would not see it, and say the queue was empty.
		return true
	case f.LimitKnown && f.Type != "quorum":
		return false
	case f.LimitKnown && f.DeliveryLimit.Unlimited():
		return false
	case f.LimitKnown:
		return h.DeliveryCount+2 > f.DeliveryLimit.Limit
	default:
		// Unknown limit: only quorum queues send x-delivery-count; a message
		// that was given back before is refreshed rather than risked.
		return h.DeliveryCount >= 1
	}
}

// mayBeQuorum: the management API said quorum, or (without it) a delivery
// carried x-delivery-count, which only quorum queues send.
func (p *Pass) mayBeQuorum() bool {
	if p.facts.LimitKnown {
		return p.facts.Type == "quorum"
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.sawDeliveryCount
}

// awaitApplied keeps the channel open until the queue has applied the
// pass's acks. A quorum queue holds a channel's commands back past its soft
// limit and drops them when the channel closes, which would leave acked
// messages in the queue (duplicates after a replay). The give-back nack is
// the pass's last command, so once the given-back messages are ready again
// every ack before it was applied. Bounded: past the deadline the channel
// closes anyway (at worst a duplicate, never a loss).
func (p *Pass) awaitApplied(ctx context.Context, wantReady int) *Note {
	deadline := time.Now().Add(appliedWait)
	for {
		ready, err := readyCount(ctx, p.ch, p.facts)
		if err != nil || ready >= wantReady {
			return nil
		}
		if time.Now().After(deadline) {
			return &Note{Kind: NoteAcksPending, Wait: appliedWait, Count: ready, Expected: wantReady}
		}
		t := time.NewTimer(20 * time.Millisecond)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
	}
}

// giveBackWait bounds how long a pass's Close waits for what it gave back
// to be ready again.
const giveBackWait = 2 * time.Second

// refreshBatch is how many held copies refresh acks per confirmed batch.
// On a quorum queue every ack frame is a command the channel pipelines to
// the queue; past 32 unapplied ones (rabbit_fifo_client's soft limit) the
// channel holds further acks back, and drops them if it closes first: the
// acked message comes back beside its copy, one give-back from the limit
// (measured on 3.10.8: 50 single acks then a close, 17 messages returned).
const refreshBatch = 16

// refresh re-publishes the held messages at risk of reaching the delivery
// limit by their give-back (republish), so that they are not given back.
// A failed refresh leaves the message to be given back, which is still
// safe: it was refreshed with one give-back to spare.
func (p *Pass) refresh(ctx context.Context) (int, error) {
	p.mu.Lock()
	risky := make(map[uint64]Message, len(p.atRisk))
	tags := make([]uint64, 0, len(p.atRisk))
	for tag, m := range p.atRisk {
		risky[tag] = m
		tags = append(tags, tag)
	}
	p.mu.Unlock()
	if len(risky) == 0 {
		return 0, nil
	}
	slices.Sort(tags)
	done, err := p.republish(ctx, tags, risky, refreshBatch)
	return len(done), err
}

// appliedWait bounds awaitApplied.
const appliedWait = 5 * time.Second
