package broker

import (
	"context"
	"fmt"
	"slices"

	amqp "github.com/rabbitmq/amqp091-go"
)

// A message one lost connection from its queue's delivery limit is made
// safe as it arrives, before the caller sees it. RabbitMQ counts a lost
// connection (and a reject) against a quorum queue's limit on every
// version, and RabbitMQ 4.3 carries the count across dead-lettering: a
// message parked by the default limit of 20 arrives in a parking lot with
// the same default carrying x-delivery-count 21 (measured on 4.3.6), so
// the first holder whose process dies, whose terminal hangs up or whose
// network drops deletes it. Giving such a message back at the end of the
// pass is too late for that; so the pass re-publishes it to the queue's
// tail (mandatory, confirmed, without the delivery headers) and acks the
// held copies at once, a batch of what is here, then reads on: the copy comes
// round again later in the same pass, no longer at risk, and is handed
// over there. A message keeps its headers (x-death, the error, the
// origin), so what a person reads of it does not change; only its place
// does, behind the messages that were not at risk.
//
// How many such messages are held unsafe at a time is bounded by the
// pass's window on a queue with a delivery limit (riskWindow): 256 at
// first and again after any segment that met one, doubling after each
// segment that met none (a lot with no such message pays a few more
// segments, not a small window throughout).

// riskWindowStart is the window of a pass on a queue with a delivery
// limit while it may meet messages one lost connection from the limit.
const riskWindowStart = 256

// dropsOnLoss reports whether one lost connection while h is held would
// make its queue drop (or dead-letter) it: its count would pass the limit.
// Without the management API any counted message is treated so.
func (p *Pass) dropsOnLoss(h *Held) bool {
	f := p.facts
	switch {
	case f.LimitKnown && (f.Type != "quorum" || f.DeliveryLimit.Unlimited()):
		return false
	case f.LimitKnown:
		return h.DeliveryCount+1 > f.DeliveryLimit.Limit
	default:
		return h.DeliveryCount >= 1
	}
}

// limitedWindow: the queue may drop a held message for its delivery
// count, so the pass keeps its window small while it meets such messages.
func (p *Pass) limitedWindow() bool {
	f := p.facts
	if !f.LimitKnown {
		return f.Type != "classic"
	}
	return f.Type == "quorum" && !f.DeliveryLimit.Unlimited()
}

// nextSegmentWindow is the window of a segment about to start, from what
// the one before it met (see above).
func (p *Pass) nextSegmentWindow() {
	if p.riskWindow == 0 {
		return
	}
	if p.segAtRisk {
		p.riskWindow = riskWindowStart
	} else {
		p.riskWindow = min(2*p.riskWindow, maxPrefetch)
	}
	p.segAtRisk = false
}

// makeSafe re-publishes the pending messages (see above) and acks each
// held copy once its new one is confirmed. A message it could not make
// safe is handed over like any other (and given back or refreshed at
// Close as before). It returns how many it made safe.
func (p *Pass) makeSafe(ctx context.Context) int {
	pending := p.pending
	p.pending = nil
	if len(pending) == 0 {
		return 0
	}
	tags := make([]uint64, len(pending))
	msgs := make(map[uint64]Message, len(pending))
	for i, h := range pending {
		tags[i] = h.DeliveryTag
		msgs[h.DeliveryTag] = h.Message
	}
	// One batch: an original whose ack the queue holds back and then drops
	// comes back one lost connection past the limit and is dropped, so the
	// copies need not wait for the queue to apply acks (refresh does).
	done, err := p.republish(ctx, tags, msgs, len(tags))
	p.mu.Lock()
	p.eagerRefreshed += len(done)
	for _, h := range pending {
		if slices.Contains(done, h.DeliveryTag) {
			p.eagerHighest = max(p.eagerHighest, h.DeliveryCount)
			continue
		}
		// Not made safe: handed over as held, refreshed at Close if it can
		// be then (a give-back by nack does not count from 4.3).
		p.seen++
		p.atRisk[h.DeliveryTag] = h.Message
		h.shared = true
		p.handover = append(p.handover, h)
	}
	if err != nil && p.safeErr == nil {
		p.safeErr = err
	}
	p.mu.Unlock()
	return len(done)
}

// republish sends a copy of each message to the queue's tail (default
// exchange, mandatory, confirmed; the delivery headers dropped) and acks
// the held delivery once its copy is confirmed, batch at a time. It
// returns the tags it acked; an unconfirmed or returned copy leaves its
// message held (at worst a duplicate, never a loss).
func (p *Pass) republish(ctx context.Context, tags []uint64, msgs map[uint64]Message, batch int) ([]uint64, error) {
	if err := p.confirmMode(); err != nil {
		return nil, err
	}
	type pending struct {
		tag uint64
		dc  *amqp.DeferredConfirmation
	}
	var done []uint64
	var firstErr error
	for from := 0; from < len(tags); from += batch {
		var sent []pending
		for _, tag := range tags[from:min(from+batch, len(tags))] {
			copyMsg := msgs[tag].Clone()
			DropDeliveryHeaders(copyMsg.Headers)
			dc, err := p.ch.PublishWithDeferredConfirmWithContext(ctx, "", p.facts.Name,
				true,  // mandatory: an unroutable copy must come back, not vanish
				false, // immediate
				copyMsg.Publishing())
			if err != nil {
				return done, fmt.Errorf("refresh %s: %w", msgs[tag].ID(), Explain(err))
			}
			sent = append(sent, pending{tag, dc})
		}
		// Bounded: a quorum queue that lost its majority confirms nothing;
		// an unconfirmed copy leaves its original held.
		wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), CloseWait)
		var confirmed []uint64
		for _, s := range sent {
			ok, err := s.dc.WaitContext(wctx)
			if err != nil || !ok {
				if firstErr == nil {
					firstErr = fmt.Errorf("refresh %s: not confirmed; it was given back instead", msgs[s.tag].ID())
				}
				continue
			}
			confirmed = append(confirmed, s.tag)
		}
		cancel()
		if len(p.returns) > 0 {
			// A returned copy means the queue is gone; nothing is acked.
			return done, fmt.Errorf("refresh: copy returned unroutable; messages were given back instead")
		}
		if len(confirmed) == 0 {
			continue
		}
		p.mu.Lock()
		err := p.ackManyLocked(confirmed)
		if err == nil {
			p.taken -= len(confirmed) // a refreshed message is still in the queue
		}
		p.mu.Unlock()
		if err != nil {
			return done, err
		}
		done = append(done, confirmed...)
	}
	return done, firstErr
}

// confirmMode puts the pass's channel in confirm mode once, with a
// returns channel for its copies.
func (p *Pass) confirmMode() error {
	if p.returns != nil {
		return nil
	}
	if err := p.ch.Confirm(false); err != nil {
		return fmt.Errorf("refresh: %w", Explain(err))
	}
	// Any return ends the refreshes (the queue is gone); room for a whole
	// batch, so the connection never waits on this channel.
	p.returns = p.ch.NotifyReturn(make(chan amqp.Return, riskWindowStart))
	return nil
}
