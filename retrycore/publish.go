package retrycore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker"
)

// Errors a retry or park publish can fail with; the original message is
// then given back, never acked.
var (
	ErrPublishNacked   = errors.New("the broker refused the copy (nack)")
	ErrPublishReturned = errors.New("the copy was unroutable (returned)")
	ErrPublishTimeout  = errors.New("no publisher confirm in time")
	ErrPublishBlocked  = errors.New("the broker is blocking publishers (resource alarm)")
)

// publisher is one worker's confirm-mode channel on the publish connection.
// Channels are not safe for concurrent use, so each worker has its own and
// publishes one copy at a time: any basic.return seen before the copy's
// confirm is that copy's (checked against exchange, key and message id).
type publisher struct {
	conn    *amqp.Connection
	ch      *amqp.Channel
	returns chan amqp.Return
	closes  chan *amqp.Error
	timeout time.Duration
	gate    *blockGate // the publish connection's connection.blocked state
}

// open (re)creates the channel in confirm mode with its notifications.
func (p *publisher) open() error {
	if p.ch != nil {
		_ = p.ch.Close()
	}
	ch, err := p.conn.Channel()
	if err != nil {
		p.ch = nil
		return fmt.Errorf("open publish channel: %w", broker.Explain(err))
	}
	if err := ch.Confirm(false /* no-wait */); err != nil {
		_ = ch.Close()
		p.ch = nil
		return fmt.Errorf("confirm mode: %w", broker.Explain(err))
	}
	// Buffered and drained after every confirm: amqp091-go drops a
	// notification after 5s when the channel is full.
	p.returns = ch.NotifyReturn(make(chan amqp.Return, 16))
	p.closes = ch.NotifyClose(make(chan *amqp.Error, 1))
	p.ch = ch
	return nil
}

// publish sends one copy with mandatory set and waits for its confirm.
// It returns nil only when the broker confirmed a routed copy.
func (p *publisher) publish(ctx context.Context, exchange, key string, msg amqp.Publishing) error {
	if p.ch == nil || p.ch.IsClosed() {
		if err := p.open(); err != nil {
			return err
		}
	}
	timer := time.NewTimer(p.timeout)
	defer timer.Stop()
	if clear := p.gate.wait(); clear != nil {
		// A publish on a blocked connection stalls in the socket write,
		// where no timeout can reach it: wait for the alarm to clear.
		select {
		case <-clear:
		case <-timer.C:
			return ErrPublishBlocked
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	dc, err := p.ch.PublishWithDeferredConfirmWithContext(ctx, exchange, key,
		true,  // mandatory: an unroutable copy comes back instead of vanishing
		false, // immediate
		msg)
	if err != nil {
		p.discard()
		return fmt.Errorf("publish: %w", broker.Explain(err))
	}
	select {
	case <-dc.Done():
	case <-timer.C:
		// The channel's confirm sequence is now unknown to us: start over.
		p.discard()
		return ErrPublishTimeout
	}
	acked := dc.Acked()
	// The broker sends basic.return before basic.ack, and amqp091-go
	// dispatches both from one goroutine, so a return for this copy is in
	// the buffer by now.
	returned := p.drainReturns(exchange, key, msg.MessageId)
	select {
	case e, ok := <-p.closes:
		p.ch = nil
		if ok && e != nil {
			return fmt.Errorf("publish channel closed: %w", broker.Explain(e))
		}
		return fmt.Errorf("publish channel closed: %w", broker.Explain(amqp.ErrClosed))
	default:
	}
	switch {
	case returned != nil:
		return fmt.Errorf("%w: %s", ErrPublishReturned, returned.ReplyText)
	case !acked:
		if p.ch.IsClosed() {
			p.ch = nil
			return fmt.Errorf("publish channel closed before the confirm: %w", ErrPublishNacked)
		}
		return ErrPublishNacked
	}
	return nil
}

// drainReturns empties the return buffer and reports the return that
// belongs to this copy, if any.
func (p *publisher) drainReturns(exchange, key, messageID string) *amqp.Return {
	var mine *amqp.Return
	for {
		select {
		case r, ok := <-p.returns:
			if !ok {
				return mine
			}
			if r.Exchange == exchange && r.RoutingKey == key && r.MessageId == messageID {
				mine = &r
			}
		default:
			return mine
		}
	}
}

// discard closes the channel so the next publish opens a fresh one.
func (p *publisher) discard() {
	if p.ch != nil {
		_ = p.ch.Close()
		p.ch = nil
	}
}

func (p *publisher) close() { p.discard() }

// blockGate follows connection.blocked: publishers wait while it is shut.
type blockGate struct {
	mu    sync.Mutex
	clear chan struct{} // nil while not blocked; closed on unblock
}

// set records a connection.blocked (true) or unblocked (false).
func (g *blockGate) set(blocked bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	switch {
	case blocked && g.clear == nil:
		g.clear = make(chan struct{})
	case !blocked && g.clear != nil:
		close(g.clear)
		g.clear = nil
	}
}

// wait returns nil when publishing may go ahead, else a channel closed when
// the block lifts.
func (g *blockGate) wait() <-chan struct{} {
	if g == nil {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.clear
}
