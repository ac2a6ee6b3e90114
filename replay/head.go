package replay

import (
	"context"
	"errors"
	"fmt"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/retrycore"
)

// QueueDepth is what the broker says of a queue without anyone reading a
// message: its depth and, from the management API, its type, delivery
// limit and the messages published into it.
type QueueDepth struct {
	Depth int64
	Type  string // classic | quorum | stream; "" without the management API
	// Arrivals is the management API's message_stats.publish of the queue
	// (ArrivalsKnown false when the broker gives none).
	Arrivals      int64
	ArrivalsKnown bool
	DeliveryLimit broker.DeliveryLimit
	LimitKnown    bool
	Server        broker.Version
	// Consumers on the queue (management API, or the passive declare's
	// count when it read one): a browse, a replay or a service reading it.
	Consumers int64
	// ReadyOnly: Depth is a passive declare's count of the ready messages
	// (the management API gave none, or 0 that may be no count): messages
	// held unacknowledged, by a browse pass for one, are not in it.
	ReadyOnly bool
}

// ReadsHarmlessly reports whether the queue's messages can be read by a
// browse pass and given back without any being counted toward a delivery
// limit or moved: classic queues on every version; quorum queues from
// RabbitMQ 4.3, where a basic.nack(requeue) is not counted (asserted by
// broker's versions tests). Before 4.3 every give-back of a quorum message
// counts, whatever returns it (measured on 3.10.8 and 4.0.5: nack, reject,
// a cancel then a nack, a channel close), and 3.10 without a limit puts
// it at the back. An unknown type may be quorum.
func (d QueueDepth) ReadsHarmlessly() bool {
	switch d.Type {
	case "classic":
		return true
	case "quorum":
		return d.Server.Known() && !d.Server.NackCountsTowardDeliveryLimit()
	}
	return false
}

// Scannable reports whether the watch may read the queue's messages with
// whole browse passes: classic queues, and quorum queues whose type and
// limit the management API gave, on every version. Before 4.3 each pass
// raises a quorum message's x-delivery-count by one, but nothing is lost:
// without a limit nothing counts toward one, and with one the pass
// refreshes a message one give-back from it (re-published, confirmed,
// then the held one acked) instead of giving it back. An unknown type may
// be a quorum queue of unknown limit: not read.
func (d QueueDepth) Scannable() bool {
	switch d.Type {
	case "classic":
		return true
	case "quorum":
		return d.LimitKnown
	}
	return false
}

// HeadReadHarmless reports whether the first message alone can be read and
// given back in place: classic queues only. A quorum queue (4.x) puts a
// given-back message in its returns, behind the messages returned before
// it (measured on 4.3.6: after a browse pass every message waits there, and
// the head given back alone went behind them); only a whole pass, given
// back at once, keeps its order.
func (d QueueDepth) HeadReadHarmless() bool { return d.Type == "classic" }

// Depth reads a queue's depth: from the management API when it answers,
// else from a passive declare on the consuming connection (which also
// works with management.disable_stats).
func (s *Session) Depth(ctx context.Context, queue string) (QueueDepth, error) {
	conn, err := s.consumer(ctx)
	if err != nil {
		return QueueDepth{}, err
	}
	d := QueueDepth{Server: conn.ServerVersion}
	if m := s.optionalManagement(ctx); m != nil {
		q, err := m.Queue(ctx, queue)
		if errors.Is(err, broker.ErrNotFound) {
			return d, &sentinelError{kind: broker.ErrNotFound, msg: fmt.Sprintf("no queue %q in vhost %q", queue, s.vhost())}
		}
		if err == nil {
			d.Type, d.Depth, d.Consumers = q.Type, q.Messages, q.Consumers
			d.DeliveryLimit, d.LimitKnown = broker.EffectiveDeliveryLimit(q, d.Server), true
			if q.MessageStats.Publish != nil {
				d.Arrivals, d.ArrivalsKnown = *q.MessageStats.Publish, true
			}
			if q.Messages > 0 {
				return d, nil
			}
		}
	}
	// No management API, or a count of 0 that may be no count at all
	// (management.disable_stats, a queue whose statistics have not arrived
	// yet, a quorum queue's count that timed out to 0 under load on
	// 3.10.8): a passive declare counts the ready messages.
	ch, err := conn.Channel()
	if err != nil {
		return d, fmt.Errorf("open channel: %w", broker.Explain(err))
	}
	defer conn.CloseChannel(ch)
	ready, consumers, err := broker.QueueCounts(ch, queue)
	if err != nil {
		if errors.Is(err, broker.ErrNotFound) {
			return d, &sentinelError{kind: broker.ErrNotFound, msg: fmt.Sprintf("no queue %q in vhost %q", queue, s.vhost())}
		}
		return d, err
	}
	if int64(ready) > d.Depth {
		d.Depth = int64(ready)
	}
	// Without the management API, "no consumers" would be a guess that
	// lets the watch read a queue another consumer works on.
	d.Consumers = max(d.Consumers, int64(consumers))
	d.ReadyOnly = true
	return d, nil
}

// ErrHasConsumers: Head found consumers on the queue (a replay, a browse,
// a service) and read nothing. It wraps broker.ErrOthersConsume, as a
// scan's refusal does.
var ErrHasConsumers = fmt.Errorf("%w: its head is not read", broker.ErrOthersConsume)

// ErrNotHarmless: the queue's head cannot be read without a give-back that
// counts toward a delivery limit or moves the message (see ReadsHarmlessly).
var ErrNotHarmless = errors.New("reading this queue's messages is not harmless on this broker")

// Head reads the first message of a queue and gives it back at once: one
// basic.get with manual ack, then basic.nack(requeue). It refuses (with
// ErrNotHarmless) a queue whose give-back would count or move the message
// (see HeadReadHarmless), and reads nothing (ErrHasConsumers) from a queue
// that has consumers. ok is false when the queue is empty.
func (s *Session) Head(ctx context.Context, queue string, d QueueDepth) (sum Summary, ok bool, err error) {
	if !d.HeadReadHarmless() {
		return Summary{}, false, ErrNotHarmless
	}
	conn, err := s.consumer(ctx)
	if err != nil {
		return Summary{}, false, err
	}
	ch, err := conn.Channel()
	if err != nil {
		return Summary{}, false, fmt.Errorf("open channel: %w", broker.Explain(err))
	}
	defer conn.CloseChannel(ch)
	// The consumers now, not as the management API counted them seconds
	// ago: a head read must not interleave with another consumer's work.
	if _, consumers, err := broker.QueueCounts(ch, queue); err != nil {
		return Summary{}, false, err
	} else if consumers > 0 {
		return Summary{}, false, ErrHasConsumers
	}
	dl, ok, err := ch.Get(queue, false) // autoAck: false, the message is given back
	if err != nil {
		return Summary{}, false, broker.Explain(err)
	}
	if !ok {
		return Summary{}, false, nil
	}
	m := broker.FromDelivery(dl)
	// Given back before anything else is done with it: a classic queue
	// puts it back in its place.
	if err := ch.Nack(dl.DeliveryTag, false, true); err != nil { // multiple: false, requeue: true
		return Summary{}, false, broker.Explain(err)
	}
	// The facts, the parked time and the error group as a list shows them;
	// the origin without the management API's lookups (nothing here
	// needs it, and a read every interval should cost the broker little).
	sum = summarize(ctx, m, m.ID(), retrycore.OriginQuery{ParkingLot: queue})
	sum.Group = retrycore.GroupKey(sum.Facts.Error)
	return sum, true, nil
}

// awaitReady asks until the queue has want ready messages, at most wait.
func awaitReady(ctx context.Context, ch *amqp.Channel, queue string, want int, wait time.Duration) bool {
	deadline := time.Now().Add(wait)
	for {
		n, err := broker.ReadyCount(ch, queue)
		if err != nil {
			return false
		}
		if n >= want {
			return true
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return false
		}
		time.Sleep(10 * time.Millisecond) // the broker tells no one when a return is applied
	}
}

// AwaitReady waits (at most wait) until the queue has want ready messages
// again, after a pass gave them back: a quorum queue applies a give-back
// later, and a read of the head meanwhile would take a message from the
// middle of the returns. It reports whether they were.
func (s *Session) AwaitReady(ctx context.Context, queue string, want int, wait time.Duration) bool {
	conn, err := s.consumer(ctx)
	if err != nil {
		return false
	}
	ch, err := conn.Channel()
	if err != nil {
		return false
	}
	defer conn.CloseChannel(ch)
	return awaitReady(ctx, ch, queue, want, wait)
}

// Vhost is the vhost the session is connected to.
func (s *Session) Vhost() string { return s.vhost() }
