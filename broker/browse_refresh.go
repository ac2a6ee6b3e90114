package broker

import (
	"context"
	"fmt"
	"slices"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// mustRefresh: a give-back makes the count c+1, and RabbitMQ drops a message
// whose count passes the limit (measured on 3.10.8: limit 3 kept it through
// count 3 and dropped it on the 4th give-back). Keep one give-back spare for
// a connection lost while the message is held.
func (p *Pass) mustRefresh(h *Held) bool {
	f := p.facts
	switch {
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

// refresh re-publishes at-risk messages to the queue's tail (default
// exchange, mandatory, confirmed) and acks each held copy once its new copy
// is confirmed. Copies go out on the pass's own channel, refreshBatch at a
// time: a confirm on that channel means the queue has applied everything the
// channel sent before, so the acks never pile up past the soft limit. A
// failed refresh leaves the message to be given back, which is still safe:
// it was refreshed with one give-back to spare.
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
	if err := p.ch.Confirm(false); err != nil {
		return 0, fmt.Errorf("refresh: %w", Explain(err))
	}
	returns := p.ch.NotifyReturn(make(chan amqp.Return, len(risky)))
	type pending struct {
		tag uint64
		dc  *amqp.DeferredConfirmation
	}
	n := 0
	var firstErr error
	for from := 0; from < len(tags); from += refreshBatch {
		var sent []pending
		for _, tag := range tags[from:min(from+refreshBatch, len(tags))] {
			copyMsg := risky[tag].Clone()
			DropDeliveryHeaders(copyMsg.Headers)
			dc, err := p.ch.PublishWithDeferredConfirmWithContext(ctx, "", p.facts.Name,
				true,  // mandatory: an unroutable copy must come back, not vanish
				false, // immediate
				copyMsg.Publishing())
			if err != nil {
				return n, fmt.Errorf("refresh %s: %w", risky[tag].ID(), Explain(err))
			}
			sent = append(sent, pending{tag, dc})
		}
		// Bounded: a quorum queue that lost its majority confirms nothing;
		// an unconfirmed copy leaves its original to be given back (at worst
		// a duplicate).
		wctx, cancel := context.WithTimeout(ctx, CloseWait)
		for _, s := range sent {
			ok, err := s.dc.WaitContext(wctx)
			if err != nil || !ok {
				if firstErr == nil {
					firstErr = fmt.Errorf("refresh %s: not confirmed; it was given back instead", risky[s.tag].ID())
				}
				continue
			}
			if len(returns) > 0 {
				// A returned copy means the queue is gone; nothing is acked.
				cancel()
				return n, fmt.Errorf("refresh: copy returned unroutable; messages were given back instead")
			}
			p.mu.Lock()
			err = p.ackLocked(s.tag)
			if err == nil {
				p.taken-- // a refreshed message is still in the queue
			}
			p.mu.Unlock()
			if err != nil {
				cancel()
				return n, err
			}
			n++
		}
		cancel()
	}
	return n, firstErr
}

// appliedWait bounds awaitApplied.
const appliedWait = 5 * time.Second
