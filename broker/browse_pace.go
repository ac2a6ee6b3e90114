package broker

import (
	"context"
	"fmt"
	"strconv"

	amqp "github.com/rabbitmq/amqp091-go"
)

// pushWindow is how many deliveries a classic queue's pass lets the broker
// push beyond what the caller holds. Without a bound the broker pushes the
// whole queue at once, and whatever the caller has not yet taken waits in
// amqp091-go's unbounded buffer: a 100k-message replay, slower than the
// broker's push, held tens of thousands of deliveries there, and spent its
// CPU collecting them.
const pushWindow = 2048

// A paced pass bounds the push with per-consumer prefetch, the one limit
// every version applies the same way: RabbitMQ 4.3 treats basic.qos with
// global=true as per-consumer, and a consumer keeps the prefetch it was
// created with, so a channel-wide limit raised as the caller goes stalls
// after the first window there. Instead the pass consumes in segments: a
// consumer with a prefetch of one window; once the caller has read half a
// window from it, the pass cancels it and starts the next consumer on the
// same channel. Cancelling leaves its deliveries held (delivery tags
// belong to the channel, so acks and the final give-back still cover them),
// and amqp091-go hands over every delivery it had before it closes the
// consumer's Go channel, so the caller reads the segments in order.

// consumer is one segment's consumer.
type consumer struct {
	tag        string
	deliveries <-chan amqp.Delivery
	read       int  // deliveries the caller took from it
	cancelled  bool // basic.cancel sent: it only drains now
}

// consume starts a consumer with its own prefetch (basic.qos without
// global applies to consumers created after it).
func (p *Pass) consume(ctx context.Context, prefetch int) (*consumer, error) {
	if err := p.ch.Qos(prefetch, 0, false); err != nil {
		return nil, fmt.Errorf("browse %s: qos: %w", p.facts.Name, Explain(err))
	}
	tag := p.tag + "-" + strconv.Itoa(len(p.consumers))
	// Not tied to ctx: amqp091-go would cancel the consumer by itself when
	// ctx ends, racing the pass's own cancels and Close; the pass cancels
	// every segment it started.
	d, err := p.ch.ConsumeWithContext(context.WithoutCancel(ctx), p.facts.Name, tag,
		false, // autoAck: hold every delivery
		false, // exclusive
		false, // noLocal
		false, // noWait
		nil)
	if err != nil {
		return nil, fmt.Errorf("browse %s: %w", p.facts.Name, Explain(err))
	}
	c := &consumer{tag: tag, deliveries: d}
	p.consumers = append(p.consumers, c)
	return c, nil
}

// pace starts the next segment once the caller has read half a window from
// the newest consumer and the pass still has messages to see. The next
// consumer's prefetch is what remains of the target, at most a window (a
// segment may still receive more than its prefetch when the caller acks:
// what is pushed past the target is given back at Close).
func (p *Pass) pace(ctx context.Context) error {
	newest := p.consumers[len(p.consumers)-1]
	p.mu.Lock()
	left := p.target - p.seen
	p.mu.Unlock()
	if newest.cancelled || newest.read < pushWindow/2 || left <= 0 {
		return nil
	}
	// Cancel first: every delivery to this consumer precedes the
	// cancel-ok, and the next consumer's come after it. With both consuming
	// at once the queue would share its head between them, out of order.
	newest.cancelled = true
	if err := p.conn.Bounded("cancel segment", p.answerWait(), func() error { return p.ch.Cancel(newest.tag, false) }); err != nil {
		return fmt.Errorf("browse %s: cancel segment: %w", p.facts.Name, Explain(err))
	}
	_, err := p.consume(ctx, min(pushWindow, left))
	return err
}

// current is the consumer the caller reads from: the oldest one not yet
// drained.
func (p *Pass) current() *consumer { return p.consumers[p.drained] }

// segmentDrained moves on to the next consumer when the current one was
// cancelled by the pass and has handed over everything (true), or reports
// that it closed for another reason (false).
func (p *Pass) segmentDrained() bool {
	if !p.current().cancelled || p.drained+1 >= len(p.consumers) {
		return false
	}
	p.drained++
	return true
}
