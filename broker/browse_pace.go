package broker

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// pushWindow is how many deliveries a classic queue's pass lets the
// broker push beyond what the caller holds (a quorum queue's: window).
// Without a bound the broker pushes the whole queue at once, and whatever
// the caller has not yet taken waits in amqp091-go's unbounded buffer: a
// 100k-message replay, slower than the broker's push, held tens of
// thousands of deliveries there, and spent its CPU collecting them.
const pushWindow = 2048

// A paced pass bounds the push with per-consumer prefetch, the one limit
// every version applies the same way: RabbitMQ 4.3 treats basic.qos with
// global=true as per-consumer, and a consumer keeps the prefetch it was
// created with, so a channel-wide limit raised as the caller goes stalls
// after the first window there. Instead the pass consumes in segments: a
// consumer with a prefetch of one window, cancelled before the next one
// starts on the same channel (with both consuming at once the queue would
// share its head between them, out of order). Cancelling leaves a
// segment's deliveries held: delivery tags belong to the channel, so acks
// and the final give-back still cover them, and a quorum queue keeps a
// cancelled consumer's deliveries checked out to it until they are
// settled.
//
// When to cancel depends on what the queue still sends the segment:
//
//   - a classic queue sends a consumer's every delivery before its
//     cancel-ok, and amqp091-go hands them over before it closes the
//     consumer's Go channel; so the pass cancels once the caller has read
//     half a window, and reads the rest while the next segment fills;
//   - a quorum queue answers the cancel on its own, and a delivery still on
//     its way to the cancelled consumer never reaches the caller: the
//     channel returns it to the queue (measured on 4.3.6: a pass acking as
//     it read skipped the ~900 messages its acks had let the broker send),
//     out of order, and before 4.3 a return counts against the delivery
//     limit. So the pass cancels only a segment the queue can send nothing
//     more: the caller has read its prefetch plus one more for each of its
//     deliveries acked, and no ack goes out while the cancel is on its way
//     (an ack may wait that round trip). A pass that acks as it reads (a
//     replay) keeps its one consumer; one that holds everything (a browse)
//     changes segment every window. Only Close cancels a segment that may
//     still be sent more: what it is sent then arrived after the pass
//     began. A queue of unknown type is treated alike.

// consumer is one segment's consumer.
type consumer struct {
	tag        string
	deliveries <-chan amqp.Delivery
	prefetch   int
	read       int  // deliveries the caller took from it
	cancelled  bool // basic.cancel sent: it only drains now
	// firstTag is its first delivery tag (exact on a segment of a quorum
	// queue, read to its end before the next began).
	firstTag uint64
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
	p.mu.Lock()
	first := p.lastTag + 1
	p.mu.Unlock()
	c := &consumer{tag: tag, deliveries: d, prefetch: prefetch, firstTag: first}
	p.consumers = append(p.consumers, c)
	return c, nil
}

// pace starts the next segment when the newest one is done with (see
// above) and the pass still has messages to see. The next consumer's
// prefetch is what remains of the target, at most a window (a classic
// segment may still receive more than its prefetch when the caller acks:
// what is pushed past the target is given back at Close).
func (p *Pass) pace(ctx context.Context) error {
	newest := p.consumers[len(p.consumers)-1]
	p.mu.Lock()
	left := p.target - p.seen
	p.mu.Unlock()
	if newest.cancelled || left <= 0 {
		return nil
	}
	if p.facts.Type != "classic" {
		return p.paceSpent(ctx, newest, left)
	}
	if newest.read < pushWindow/2 {
		return nil
	}
	newest.cancelled = true
	if err := p.cancelSegment(newest, p.answerWait()); err != nil {
		return err
	}
	_, err := p.consume(ctx, min(pushWindow, left))
	return err
}

// paceSpent starts the next segment once the newest one can be sent
// nothing more: it holds p.mu from the check to the cancel-ok, so that no
// ack gives the segment room for another delivery meanwhile.
func (p *Pass) paceSpent(ctx context.Context, newest *consumer, left int) error {
	wait := p.answerWait()
	p.mu.Lock()
	if newest.read < newest.prefetch+p.segSettled {
		p.mu.Unlock()
		return nil // more is on its way, or the queue has no more
	}
	newest.cancelled = true
	err := p.cancelSegment(newest, wait)
	p.segFirstTag, p.segSettled = p.lastTag+1, 0
	p.nextSegmentWindow()
	p.mu.Unlock()
	if err != nil {
		return err
	}
	_, err = p.consume(ctx, min(p.window(), left))
	if errors.Is(err, ErrNotFound) {
		// The queue went while the pass held it: the broker cancelled the
		// segment before this one, as it would have the only one.
		return fmt.Errorf("browse %s: %w", p.facts.Name, ErrConsumerCancelled)
	}
	return err
}

// owedForAcks: the newest segment of a quorum pass has had its prefetch
// and waits only for what the caller's acks let the queue send. That comes
// once the queue has applied the acks, which lags under load (measured on
// 3.10.8: 2,075 acks behind during a pass acking one message in 20), so
// the pass waits for it as for a classic queue that already delivered.
func (p *Pass) owedForAcks() bool {
	if !p.paced || p.facts.Type == "classic" {
		return false
	}
	newest := p.consumers[len(p.consumers)-1]
	return !newest.cancelled && newest.read >= newest.prefetch
}

func (p *Pass) cancelSegment(c *consumer, wait time.Duration) error {
	if err := p.conn.Bounded("cancel segment", wait, func() error { return p.ch.Cancel(c.tag, false) }); err != nil {
		return fmt.Errorf("browse %s: cancel segment: %w", p.facts.Name, Explain(err))
	}
	return nil
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

// segmentStarts are the first tags of the pass's segments after the first.
func (p *Pass) segmentStarts() []uint64 {
	var starts []uint64
	for _, c := range p.consumers[1:] {
		starts = append(starts, c.firstTag)
	}
	return starts
}

// maxPrefetch is the largest prefetch amqp091-go sends (basic.qos carries
// it in 16 bits).
const maxPrefetch = 65535

// window is the prefetch of one segment. A quorum queue's (or one of
// unknown type) is as large as a prefetch goes: such a segment ends only
// once the queue can send it nothing more, so a pass that acks as it reads
// keeps one consumer whose deliveries wait on the acks the queue applies,
// and a small window slows it (measured on 4.3.6, 60,000 messages, six of
// seven acked one by one: 15–18 s with a window of 2,048, 10–12 s with
// one of 65,535). Up to 65,535 messages such a pass is one segment.
//
// On a queue with a delivery limit the window is riskWindow (browse_safe.go).
func (p *Pass) window() int {
	switch {
	case p.facts.Type == "classic":
		return pushWindow
	case p.riskWindow > 0:
		return p.riskWindow
	}
	return maxPrefetch
}
