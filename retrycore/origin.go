package retrycore

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker"
)

// ErrUnknownOrigin is returned when nothing in a message tells where it came
// from. parkinglot never guesses: the caller gives a destination.
var ErrUnknownOrigin = errors.New("cannot tell where this message came from")

// Destination is an exchange and routing key; the empty exchange is the
// default exchange.
type Destination struct {
	Exchange   string `json:"exchange"`
	RoutingKey string `json:"routing_key"`
}

// Destination errors, for callers to tell a mistyped destination (a
// usage error) from a failed publish.
var (
	// ErrNotDestination: the text is not EXCHANGE:ROUTING_KEY (an empty
	// text included: an unset shell variable is not "the origin").
	ErrNotDestination = errors.New(`want EXCHANGE:ROUTING_KEY (":queue" for the default exchange)`)
	// ErrNoQueueName: the default exchange with an empty routing key. The
	// default exchange routes by queue name and no queue has the empty
	// name, so the publish could only come back unroutable.
	ErrNoQueueName = errors.New("the default exchange routes by queue name, so an empty routing key reaches no queue")
	// ErrNameTooLong: an exchange name or routing key over 255 bytes, which
	// AMQP 0-9-1 cannot carry (a short string).
	ErrNameTooLong = errors.New("AMQP allows at most 255 bytes")
)

// ParseDestination reads "EXCHANGE:ROUTING_KEY"; ":orders" is the default
// exchange with routing key "orders". The routing key may contain colons.
// Errors wrap ErrNotDestination, or Check's ErrNoQueueName or ErrNameTooLong.
func ParseDestination(s string) (Destination, error) {
	ex, rk, ok := strings.Cut(s, ":")
	if !ok {
		return Destination{}, fmt.Errorf("destination %q: %w", broker.Truncate(s, 60), ErrNotDestination)
	}
	d := Destination{Exchange: ex, RoutingKey: rk}
	if err := d.Check(); err != nil {
		return Destination{}, fmt.Errorf("destination %q: %w", broker.Truncate(s, 60), err)
	}
	return d, nil
}

// Check is the rule every given destination meets, however it was made:
// not the default exchange with an empty routing key (ErrNoQueueName), and
// names AMQP can carry (ErrNameTooLong). A
// named exchange with an empty key is fine (fanout and headers exchanges
// ignore the key).
func (d Destination) Check() error {
	switch {
	case d.Exchange == "" && d.RoutingKey == "":
		return ErrNoQueueName
	case len(d.Exchange) > broker.MaxShortString:
		return fmt.Errorf("the exchange name is %d bytes; %w", len(d.Exchange), ErrNameTooLong)
	case len(d.RoutingKey) > broker.MaxShortString:
		return fmt.Errorf("the routing key is %d bytes; %w", len(d.RoutingKey), ErrNameTooLong)
	}
	return nil
}

func (d Destination) String() string {
	ex := d.Exchange
	if ex == "" {
		ex = "(default exchange)"
	}
	return ex + " / " + d.RoutingKey
}

// Origin sources, shown with the answer so people know why.
const (
	SourceOverride         = "the destination given"
	SourceConfig           = "config"
	SourceOriginalHeaders  = HeaderOriginalExchange
	SourceSpring           = "x-original-routingKey (Spring)"
	SourceFirstDeath       = "x-death of x-first-death-queue"
	SourceDelayQueue       = "x-death via delay queue"
	SourceFailedQueue      = "failed-queue header"
	SourceMassTransitQueue = "MassTransit _error queue"
)

// Origin is where a parked message came from.
type Origin struct {
	Destination
	// Source says which rule gave the answer ("x-original-exchange", …).
	Source string `json:"source"`
	// Queue is the queue that failed, when the headers name it; a replay
	// to the failed queue alone sends there.
	Queue string `json:"queue,omitempty"`
}

// QueueArgs looks up a queue's arguments (the management API implements
// it); resolution uses it to follow a TTL delay queue's dead-letter target.
type QueueArgs interface {
	QueueArguments(ctx context.Context, queue string) (amqp.Table, error)
}

// OriginQuery is what origin resolution needs besides the headers.
type OriginQuery struct {
	Override   *Destination // the destination the caller gave
	Default    *Destination // the parking lot's default in config
	ParkingLot string       // the queue the message is parked in
	Queues     QueueArgs    // nil when the management API is not available
	// Limits is not used by ResolveOrigin; it rides along for
	// DecodeWith(ctx, h, q.Limits), which callers run beside it (nil when
	// the management API is not available).
	Limits DeliveryLimits
}

// ResolveOrigin applies the order of rules that says where a replay goes:
// the destination given, the configured default, x-original-* (ours or Spring's), rascal's
// originalExchange/originalRoutingKey, the x-death entry of
// x-first-death-queue (following a TTL delay queue's dead-letter target),
// the failed-queue headers of NServiceBus, Rebus, MassTransit and rascal,
// MassTransit's "X_error" naming, and otherwise ErrUnknownOrigin.
//
// x-original-* naming the default exchange and, as routing key, the very
// queue x-death says the message first died in with a named exchange is
// the last hop of a consumer's own retry loop (an amqplib consumer copying
// its delivery's fields), not the origin: the x-death entry is used then.
//
// Origin.Queue, the queue the message failed in, comes from a header
// naming it, else from the first death when its reason is rejected, maxlen
// or delivery_limit (every reason but an expiry, which names a delay queue
// unless the management API shows the queue is not one).
func ResolveOrigin(ctx context.Context, h amqp.Table, q OriginQuery) (Origin, error) {
	deaths, _ := Deaths(h)
	return resolveOrigin(ctx, h, deaths, firstDeath(h, deaths), q)
}

// ResolveOriginOf is ResolveOrigin for headers the caller has decoded into
// f already (Decode, DecodeWith): their x-death is not decoded again, which
// a replay would otherwise do for every message it moves.
func ResolveOriginOf(ctx context.Context, h amqp.Table, f Facts, q OriginQuery) (Origin, error) {
	return resolveOrigin(ctx, h, f.Deaths, f.FirstDeath, q)
}

func resolveOrigin(ctx context.Context, h amqp.Table, deaths []Death, first DeathRef, q OriginQuery) (Origin, error) {
	failed := failedQueue(h)
	switch {
	case q.Override != nil:
		return Origin{Destination: *q.Override, Source: SourceOverride, Queue: orFirstDeathQueue(failed, first)}, nil
	case q.Default != nil:
		return Origin{Destination: *q.Default, Source: SourceConfig, Queue: orFirstDeathQueue(failed, first)}, nil
	}
	lastHop := ""
	if ex, ok := asString(h[HeaderOriginalExchange]); ok {
		if rk, ok := asString(h[HeaderOriginalRoutingKey]); ok {
			if !isLastHop(ex, rk, deaths, first) {
				return Origin{Destination: Destination{ex, rk}, Source: SourceOriginalHeaders, Queue: orFirstDeathQueue(failed, first)}, nil
			}
			lastHop = " (x-original-* named only the last hop, " + Destination{ex, rk}.String() + ")"
		} else if rk, ok := asString(h["x-original-routingKey"]); ok {
			return Origin{Destination: Destination{ex, rk}, Source: SourceSpring, Queue: orFirstDeathQueue(failed, first)}, nil
		}
	}
	if ex, ok := asString(rascalValue(h, "originalExchange")); ok {
		if rk, ok := asString(rascalValue(h, "originalRoutingKey")); ok {
			return Origin{Destination: Destination{ex, rk}, Source: SourceRascal, Queue: orFirstDeathQueue(failed, first)}, nil
		}
	}
	if first.Queue != "" {
		if d, ok := findDeath(deaths, first.Queue, first.Reason); ok && len(d.RoutingKeys) > 0 {
			o := Origin{Destination: Destination{d.Exchange, d.RoutingKeys[0]}, Source: SourceFirstDeath + lastHop, Queue: failed}
			if d.Reason != "expired" && o.Queue == "" {
				o.Queue = d.Queue
			}
			if d.Reason == "expired" && q.Queues != nil {
				if via, ok, err := followDelayQueue(ctx, q.Queues, d); err != nil {
					return Origin{}, err
				} else if ok && !(via.Exchange == "" && via.RoutingKey == q.ParkingLot && q.ParkingLot != "") {
					// (A queue whose dead-letter target is the parking lot
					// itself is a main queue with a TTL, not a delay queue.)
					via.Queue = failed
					return via, nil
				} else if ok && o.Queue == "" {
					o.Queue = d.Queue // that main queue is where it failed
				}
			}
			if d.Reason == "expired" && q.Queues == nil {
				o.Source += " (delay queue not followed: no management API)"
			}
			return o, nil
		}
	}
	if failed != "" {
		return Origin{Destination: Destination{"", failed}, Source: SourceFailedQueue, Queue: failed}, nil
	}
	if base, ok := strings.CutSuffix(q.ParkingLot, "_error"); ok && base != "" && hasAnyPrefix(h, "MT-") {
		return Origin{Destination: Destination{"", base}, Source: SourceMassTransitQueue, Queue: base}, nil
	}
	return Origin{}, ErrUnknownOrigin
}

// isLastHop: x-original-* say the default exchange with the first-death
// queue's name, while that queue's x-death entry names a real exchange.
func isLastHop(ex, rk string, deaths []Death, first DeathRef) bool {
	if ex != "" || rk == "" || rk != first.Queue {
		return false
	}
	d, ok := findDeath(deaths, first.Queue, first.Reason)
	return ok && d.Exchange != "" && len(d.RoutingKeys) > 0
}

// orFirstDeathQueue is failed, or when no header names the failed queue,
// the first death's queue when it died there by rejected, maxlen or
// delivery_limit.
func orFirstDeathQueue(failed string, first DeathRef) string {
	if failed != "" {
		return failed
	}
	switch first.Reason {
	case "rejected", "maxlen", "delivery_limit":
		return first.Queue
	}
	return ""
}

// followDelayQueue: a message that first died by expiring in a TTL queue
// came from wherever that queue dead-letters to (the seed's Go consumer
// leaves only retry.exchange/payment.retry in x-death).
func followDelayQueue(ctx context.Context, qa QueueArgs, d Death) (Origin, bool, error) {
	args, err := qa.QueueArguments(ctx, d.Queue)
	if err != nil {
		return Origin{}, false, fmt.Errorf("look up delay queue %q: %w", d.Queue, err)
	}
	dlx, ok := asString(args["x-dead-letter-exchange"])
	if !ok {
		return Origin{}, false, nil
	}
	rk, ok := asString(args["x-dead-letter-routing-key"])
	if !ok {
		rk = d.RoutingKeys[0] // without one, dead-lettering keeps the routing key
	}
	return Origin{Destination: Destination{dlx, rk}, Source: SourceDelayQueue + " " + d.Queue}, true, nil
}

// failedQueue returns the queue a message failed in when a header names it
// (ours, NServiceBus, Rebus, rascal's originalQueue, MassTransit).
func failedQueue(h amqp.Table) string {
	if s := headerString(h, HeaderOriginalQueue); s != "" {
		return s
	}
	if s := headerString(h, "NServiceBus.FailedQ"); s != "" {
		q, _, _ := strings.Cut(s, "@") // "queue@machine"
		return q
	}
	if s := headerString(h, "rbs2-source-queue"); s != "" {
		return s
	}
	if s, ok := asString(rascalValue(h, "originalQueue")); ok && s != "" {
		return s
	}
	if s := headerString(h, "MT-Fault-InputAddress"); s != "" {
		if u, err := url.Parse(s); err == nil && u.Path != "" {
			p := strings.TrimSuffix(u.Path, "/")
			return p[strings.LastIndex(p, "/")+1:]
		}
	}
	return ""
}

func hasAnyPrefix(h amqp.Table, prefix string) bool {
	for k := range h {
		if strings.HasPrefix(k, prefix) {
			return true
		}
	}
	return false
}

// RecordOrigin writes o into the copy's headers as the contract's
// x-original-exchange / x-original-routing-key (and x-original-queue when
// o names the failed queue), replacing what was there, so a copy sent to
// the failed queue alone still knows its true
// origin when it fails again. h is changed
// in place; it returns the headers it set.
func RecordOrigin(h amqp.Table, o Origin) []string {
	if h == nil {
		return nil
	}
	h[HeaderOriginalExchange] = o.Exchange
	h[HeaderOriginalRoutingKey] = o.RoutingKey
	set := []string{HeaderOriginalExchange, HeaderOriginalRoutingKey}
	if o.Queue != "" {
		h[HeaderOriginalQueue] = o.Queue
		set = append(set, HeaderOriginalQueue)
	}
	return set
}
