package broker

import (
	"context"
	"errors"
	"fmt"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// Close ends the pass: it refreshes held messages at risk of reaching the
// delivery limit, gives every other held message back, and closes the
// channel. Call it after the caller's acks are done; a message whose copy
// is still unconfirmed is given back (a duplicate, never a loss).
func (p *Pass) Close(ctx context.Context) (PassReport, error) {
	p.mu.Lock()
	if p.done {
		r := p.report
		p.mu.Unlock()
		return r, nil
	}
	callerSeen := p.seen
	p.mu.Unlock()

	rep := p.report
	if p.order.holdAll {
		held, note := p.holdRest(ctx)
		rep.HeldToKeepOrder = held
		if note != nil {
			rep.Notes = append(rep.Notes, *note)
		}
	}
	p.mu.Lock()
	p.done = true
	// What was read but not yet made safe is held: refreshed below, as a
	// message near the limit always was, or given back.
	for _, h := range p.pending {
		p.seen++
		p.atRisk[h.DeliveryTag] = h.Message
	}
	p.pending = nil
	p.mu.Unlock()
	for _, c := range p.consumers {
		if c.cancelled {
			continue
		}
		if err := p.conn.Bounded("cancel consumer", p.answerWait(), func() error { return p.ch.Cancel(c.tag, false) }); err != nil {
			// The channel is gone (the broker gives its deliveries back);
			// closing it anyway frees it on a connection that lives on.
			_ = p.ch.Close()
			return rep, fmt.Errorf("browse %s: the channel was lost; held messages return to the queue: %w", p.facts.Name, Explain(err))
		}
	}
	if p.facts.Type != "classic" {
		// What was pushed and not read is held too: a batched give-back
		// needs its tags, and a message one give-back from the delivery
		// limit must be refreshed, not given back.
		rep.HeldToKeepOrder += p.takePushed(ctx)
	}
	refreshed, err := p.refresh(ctx)
	p.mu.Lock()
	rep.Refreshed = refreshed + p.eagerRefreshed
	if p.eagerRefreshed > 0 {
		rep.Notes = append(rep.Notes, Note{Kind: NoteMadeSafe, Count: p.eagerRefreshed, Limit: p.facts.DeliveryLimit, DeliveryCount: p.eagerHighest})
	}
	if err == nil {
		err = p.safeErr
	}
	p.mu.Unlock()
	if err != nil {
		rep.Notes = append(rep.Notes, Note{Kind: NoteRefreshFailed, Err: err})
	}
	if p.seen > 0 && p.facts.Type != "classic" && (p.order.batched || len(p.consumers) > 1) {
		size := 0 // a segment at a time
		if p.order.batched {
			size = giveBackBatch
		}
		if note := p.giveBackInBatches(ctx, size); note != nil {
			rep.Notes = append(rep.Notes, *note)
		}
	}
	closed := false
	switch {
	case p.seen > 0 && p.facts.Type == "classic":
		// A classic queue has no delivery limit, so closing the channel
		// gives back as a nack does, and far faster: RabbitMQ 4.3.6 made
		// 200,000 held messages ready 4 s after the channel's close, while
		// a basic.nack(multiple, requeue) of them had made none ready after
		// 60 s (measured; a 1,000,000-message give-back by nack took more
		// than 25 minutes). The acks sent before it are applied first: a
		// channel's frames are handled in order.
		if err := p.conn.Bounded("close channel", p.answerWait(), p.ch.Close); err != nil && !errors.Is(err, amqp.ErrClosed) {
			return rep, fmt.Errorf("browse %s: give back: %w", p.facts.Name, Explain(err))
		}
		closed = true
	case p.seen > 0:
		// Tag 0 with multiple: every delivery still outstanding on this
		// channel (all, or what the batches left), including any pushed
		// after the pass reached its target.
		if err := p.ch.Nack(0, true, true); err != nil {
			return rep, fmt.Errorf("browse %s: give back: %w", p.facts.Name, Explain(err))
		}
	}
	p.mu.Lock()
	rep.Seen, rep.Taken = callerSeen, p.taken
	rep.GivenBack = p.seen - rep.Taken - refreshed
	p.mu.Unlock()
	switch {
	case p.mayBeQuorum() && rep.Taken > 0 && rep.GivenBack > 0:
		if note := p.awaitApplied(ctx, p.facts.Ready-rep.Taken); note != nil {
			rep.Notes = append(rep.Notes, *note)
		}
	case rep.GivenBack > 0:
		// The queue requeues what was given back: a pass opened right
		// after this one (a plan after a browse) would find fewer ready
		// messages, even none, and miss them. Wait until they are ready,
		// briefly (other clients may take some meanwhile). Polls are
		// paced: a big requeue must not also answer a stream of declares.
		if closed {
			ch, err := p.conn.Channel()
			if err != nil {
				break // the give-back is done; only the wait for it is not
			}
			p.ch, closed = ch, false
		}
		_ = p.awaitReady(ctx, p.facts.Ready-rep.Taken, giveBackWait, 20*time.Millisecond)
	}
	if !closed {
		if err := p.conn.Bounded("close channel", p.answerWait(), p.ch.Close); err != nil && !errors.Is(err, amqp.ErrClosed) {
			return rep, fmt.Errorf("browse %s: close channel: %w", p.facts.Name, Explain(err))
		}
	}
	p.mu.Lock()
	p.report = rep
	p.mu.Unlock()
	return rep, nil
}
