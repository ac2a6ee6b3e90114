package daemon

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"sync"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker"
)

// Errors a retry or park publish can fail with, besides broker.ErrNacked;
// the original message is then given back, never acked.
var (
	ErrPublishReturned = errors.New("the copy was unroutable (returned)")
	ErrPublishTimeout  = errors.New("no publisher confirm in time")
	ErrPublishBlocked  = errors.New("the broker is blocking publishers (resource alarm)")
)

// publisher is the session's one confirm-mode channel on the publish
// connection, shared by every worker. On one channel the broker confirms
// the copies of all workers in batches (basic.ack multiple); a channel per
// worker measured 0.79 of the raw retry loop against 0.85 shared.
// amqp091-go numbers a publish and writes it under the
// channel's own lock; mu only serializes the (re)opening around it. Each
// worker's confirm tracker (confirms.go) waits for that worker's copies in
// the order they were sent. A copy that times out or fails to send closes
// the channel for all: the others in flight on it resolve as not confirmed
// and their originals are given back (duplicates possible, never a loss).
type publisher struct {
	conn    *broker.Conn
	timeout time.Duration
	gate    *blockGate // the publish connection's connection.blocked state
	// inFlight is how many copies may await their confirm on the channel
	// at once (each stands for an unacked delivery: the prefetch bounds
	// them); the return buffer is sized from it.
	inFlight int

	mu      sync.Mutex
	ch      *amqp.Channel
	notices *channelNotices // the current channel's returns and close
}

// channelNotices is what one publish channel reports back besides
// confirms. The workers' confirm trackers read it, each for its own copies.
type channelNotices struct {
	conn    *broker.Conn
	ch      *amqp.Channel
	returns chan amqp.Return
	closes  chan *amqp.Error

	mu sync.Mutex // the trackers claim returns and read the close at once
	// unclaimed holds returns drained while waiting for an earlier copy.
	unclaimed []amqp.Return
	seed      maphash.Seed // for the body hashes of the copies sent on ch
	closeErr  *amqp.Error
	closed    bool
}

// sentCopy is a copy published with mandatory set, awaiting its confirm.
type sentCopy struct {
	dc                *amqp.DeferredConfirmation
	notices           *channelNotices
	exchange, key, id string
	// bodyHash tells apart copies with the same destination and message
	// id (id-less messages) when one is returned, without keeping the body.
	bodyHash uint64
	deadline time.Time
}

// open (re)creates the channel in confirm mode with its notifications;
// p.mu is held.
func (p *publisher) open() error {
	if p.ch != nil {
		_ = p.conn.CloseChannel(p.ch) // bounded: see broker.CloseWait
	}
	ch, err := p.conn.Channel()
	if err != nil {
		p.ch = nil
		return fmt.Errorf("open publish channel: %w", broker.Explain(err))
	}
	if err := ch.Confirm(false /* no-wait */); err != nil {
		_ = p.conn.CloseChannel(ch)
		p.ch = nil
		return fmt.Errorf("confirm mode: %w", broker.Explain(err))
	}
	// Room for a return of every copy that can be in flight: amqp091-go
	// drops a notification after 5s when the channel is full, and a dropped
	// return would make an unroutable copy look delivered.
	p.notices = &channelNotices{
		conn:    p.conn,
		ch:      ch,
		seed:    maphash.MakeSeed(),
		returns: ch.NotifyReturn(make(chan amqp.Return, p.inFlight+16)),
		closes:  ch.NotifyClose(make(chan *amqp.Error, 1)),
	}
	p.ch = ch
	return nil
}

// send publishes one copy with mandatory set and returns without waiting
// for its confirm (sentCopy.wait does). The timeout runs from here.
func (p *publisher) send(ctx context.Context, exchange, key string, msg amqp.Publishing) (*sentCopy, error) {
	deadline := time.Now().Add(p.timeout)
	if clear := p.gate.wait(); clear != nil {
		// A publish on a blocked connection stalls in the socket write,
		// where no timeout can reach it: wait for the alarm to clear.
		timer := time.NewTimer(p.timeout)
		defer timer.Stop()
		select {
		case <-clear:
		case <-timer.C:
			return nil, ErrPublishBlocked
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ch == nil || p.ch.IsClosed() {
		if err := p.open(); err != nil {
			return nil, err
		}
	}
	dc, err := p.ch.PublishWithDeferredConfirmWithContext(ctx, exchange, key,
		true,  // mandatory: an unroutable copy comes back instead of vanishing
		false, // immediate
		msg)
	if err != nil {
		p.discardLocked()
		return nil, fmt.Errorf("publish: %w", broker.Explain(err))
	}
	return &sentCopy{dc: dc, notices: p.notices, exchange: exchange, key: key, id: msg.MessageId, bodyHash: maphash.Bytes(p.notices.seed, msg.Body), deadline: deadline}, nil
}

// wait returns nil only when the broker confirmed a routed copy. Called by
// the confirm tracker, in the order the copies were sent.
func (c *sentCopy) wait() error {
	timer := time.NewTimer(time.Until(c.deadline))
	defer timer.Stop()
	select {
	case <-c.dc.Done():
	case <-timer.C:
		select {
		case <-c.dc.Done(): // confirmed as the deadline passed: not a timeout
			return c.settled()
		default:
		}
		// The channel's confirm sequence is now unknown to us: close it.
		// The worker opens a fresh one, and the copies still awaiting a
		// confirm on this one resolve as nacked.
		// Bounded: a cluster minority never answers this close.
		_ = c.notices.conn.CloseChannel(c.notices.ch)
		return ErrPublishTimeout
	}
	return c.settled()
}

// settled is the outcome of a copy whose confirm (ack or nack) is in.
func (c *sentCopy) settled() error {
	// The broker sends basic.return before basic.ack, and amqp091-go
	// dispatches both from one goroutine, so a return for this copy is in
	// the buffer by now.
	n := c.notices
	if r := n.claimReturn(c); r != nil {
		return fmt.Errorf("%w: %s", ErrPublishReturned, r.ReplyText)
	}
	if c.dc.Acked() {
		return nil
	}
	if e, closed := n.closeReason(); closed {
		if e != nil {
			return fmt.Errorf("publish channel closed: %w", broker.Explain(e))
		}
		return fmt.Errorf("publish channel closed before the confirm: %w", broker.ErrNacked)
	}
	return broker.ErrNacked
}

// claimReturn drains the return buffer and takes out the return that
// belongs to this copy, if any; the others wait for their own copies. A
// return carries no delivery tag, so it is matched on the destination, the
// message id and the body: only copies alike in all of them (the same
// message, retried twice at once) can take each other's return. Headers are
// not compared: they come back decoded, in types other than those sent.
func (n *channelNotices) claimReturn(c *sentCopy) *amqp.Return {
	n.mu.Lock()
	defer n.mu.Unlock()
drain:
	for {
		select {
		case r, ok := <-n.returns:
			if !ok {
				break drain
			}
			n.unclaimed = append(n.unclaimed, r)
		default:
			break drain
		}
	}
	for i, r := range n.unclaimed {
		if r.Exchange == c.exchange && r.RoutingKey == c.key && r.MessageId == c.id &&
			maphash.Bytes(n.seed, r.Body) == c.bodyHash {
			n.unclaimed = append(n.unclaimed[:i], n.unclaimed[i+1:]...)
			return &r
		}
	}
	return nil
}

// closeReason reports whether the channel closed, and the broker's reason
// when it gave one.
func (n *channelNotices) closeReason() (*amqp.Error, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if !n.closed {
		select {
		case e, ok := <-n.closes:
			n.closed = true
			if ok {
				n.closeErr = e
			}
		default:
			n.closed = n.ch.IsClosed()
		}
	}
	return n.closeErr, n.closed
}

// discardLocked closes the channel so the next publish opens a fresh one;
// p.mu is held. The copies still awaiting a confirm on it resolve as not
// confirmed, and their originals are given back.
func (p *publisher) discardLocked() {
	if p.ch != nil {
		_ = p.conn.CloseChannel(p.ch)
		p.ch = nil
	}
}

// close closes the channel once every worker's copies are settled.
func (p *publisher) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.discardLocked()
}

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
