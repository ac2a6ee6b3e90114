package broker

import (
	"context"
	"fmt"
	"io"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// receive waits for the next delivery until timeout fires (timedOut).
func (p *Pass) receive(ctx context.Context, timeout <-chan time.Time) (h *Held, timedOut bool, err error) {
	for {
		c := p.current()
		select {
		case d, ok := <-c.deliveries:
			if h, again, err := p.take(c, d, ok); !again {
				return h, false, err
			}
		case <-p.closed:
			return nil, false, p.lost()
		case <-ctx.Done():
			return nil, false, ctx.Err()
		case <-timeout:
			return nil, true, nil
		}
	}
}

// receiveReady is receive for a delivery that is already here; ok false
// when none is (nor an end of the deliveries to handle).
func (p *Pass) receiveReady() (h *Held, ok bool, err error) {
	c := p.current()
	select {
	case d, open := <-c.deliveries:
		h, again, err := p.take(c, d, open)
		return h, !again, err
	default:
		return nil, false, nil
	}
}

// take handles what a receive from c's deliveries gave: a delivery to hold,
// or their end: again when that was a drained segment's (the next segment
// is current: receive again), else why the deliveries stopped.
func (p *Pass) take(c *consumer, d amqp.Delivery, ok bool) (h *Held, again bool, err error) {
	if !ok {
		if p.segmentDrained() {
			return nil, true, nil
		}
		return nil, false, p.ended()
	}
	c.read++
	return p.hold(d, true), false, nil
}

// handoffGrace bounds the wait for a delivery amqp091-go has read but not
// yet handed over (one goroutine hop).
const handoffGrace = 100 * time.Millisecond

// lastDelivery ends a pass whose queue has nothing ready any more. A
// delivery the broker already sent counts as unacked, not ready, yet may
// still be on its way: a 16 MiB body takes a while to read. The broker's
// channel sends its deliveries and method replies in order, and anything
// it delivered before answering the ready count precedes its answer to a
// second question asked after that answer; so once that round trip is
// back, such a delivery has been read and is handed over at once.
func (p *Pass) lastDelivery(ctx context.Context) (*Held, error) {
	if _, err := p.ch.QueueDeclarePassive(p.facts.Name, false, false, false, false, nil); err != nil {
		return nil, fmt.Errorf("browse %s: %w", p.facts.Name, Explain(err))
	}
	grace := time.NewTimer(handoffGrace)
	defer grace.Stop()
	h, timedOut, err := p.receive(ctx, grace.C)
	if timedOut {
		return nil, io.EOF
	}
	return h, err
}

// ended is why a consumer's deliveries stopped before the pass ended
// it: amqp091-go marks a channel closed before it closes its consumers'
// deliveries, so a channel still open means the broker cancelled the
// consumer.
func (p *Pass) ended() error {
	if p.ch.IsClosed() {
		return p.lost()
	}
	return fmt.Errorf("browse %s: %w", p.facts.Name, ErrConsumerCancelled)
}

func (p *Pass) lost() error {
	return fmt.Errorf("browse %s: connection to the broker lost; held messages return to the queue", p.facts.Name)
}
