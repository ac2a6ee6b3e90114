package replay

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/parkinglot/parkinglot/broker"
)

// QueueRow is a queue as `parkinglot queues` and the TUI list it.
type QueueRow struct {
	broker.QueueInfo
	// ParkingLot is true for queues the config names as parking lots, for
	// queues other queues dead-letter into (their x-dead-letter-exchange /
	// -routing-key arguments or dead-letter-exchange / -routing-key
	// policies, through the exchange's bindings), and for names that
	// conventionally are (*.dlq, *dead-letter*, *_error, …).
	ParkingLot bool `json:"parking_lot"`
	// Why says why it is marked: "config", "dead-letter target of Q (…)",
	// "name".
	Why string `json:"why,omitempty"`
	// Offline are the replicas not online (a quorum queue's or a stream's
	// members) or the home node that is down (a classic queue's); the
	// node, leader, members and online fields say the rest (nodes.go).
	Offline []string `json:"offline,omitempty"`
	// Unavailable says in words why the queue cannot be used now: "no
	// leader: 2 of 3 members down (…); messages are safe but cannot be read
	// or replayed until a majority is back", or a classic queue's home node
	// down (Unavailable in nodes.go).
	Unavailable string `json:"unavailable,omitempty"`
}

// Queues lists the vhost's queues, parking lots first, then by name. It
// needs the management API.
func (s *Session) Queues(ctx context.Context) ([]QueueRow, error) {
	m, err := s.Management(ctx)
	if err != nil {
		return nil, fmt.Errorf("list queues: %w", err)
	}
	qs, err := m.Queues(ctx)
	if err != nil {
		return nil, fmt.Errorf("list queues: %w", err)
	}
	targets := deadLetterTargets(ctx, m, qs)
	rows := make([]QueueRow, len(qs))
	for i, q := range qs {
		r := QueueRow{QueueInfo: q}
		switch {
		case s.cfg.IsParkingLot(q.Name):
			r.ParkingLot, r.Why = true, "config"
		case targets[q.Name] != "":
			r.ParkingLot, r.Why = true, targets[q.Name]
		case LooksLikeParkingLot(q.Name):
			r.ParkingLot, r.Why = true, "name"
		}
		r.Offline, r.Unavailable = Offline(q), Unavailable(q, r.ParkingLot, nil)
		rows[i] = r
	}
	sort.SliceStable(rows, func(i, j int) bool {
		if rows[i].ParkingLot != rows[j].ParkingLot {
			return rows[i].ParkingLot
		}
		return rows[i].Name < rows[j].Name
	})
	return rows, nil
}

// deadLetter is where a queue dead-letters to, and what says so.
type deadLetter struct {
	exchange, routingKey string
	hasKey               bool
	from                 string // "x-dead-letter-exchange" or "policy P"
}

// deadLetterOf reads a queue's dead-letter target: its arguments, else its
// effective policy (RabbitMQ: an argument wins over a policy, "Dead Letter
// Exchanges" in its documentation).
func deadLetterOf(q broker.QueueInfo) (deadLetter, bool) {
	if ex, ok := q.Arguments["x-dead-letter-exchange"].(string); ok {
		d := deadLetter{exchange: ex, from: "x-dead-letter-exchange"}
		d.routingKey, d.hasKey = q.Arguments["x-dead-letter-routing-key"].(string)
		return d, true
	}
	if ex, ok := q.EffectivePolicy["dead-letter-exchange"].(string); ok {
		d := deadLetter{exchange: ex, from: "policy " + q.Policy}
		d.routingKey, d.hasKey = q.EffectivePolicy["dead-letter-routing-key"].(string)
		return d, true
	}
	return deadLetter{}, false
}

// isDelayQueue: a queue whose messages expire (x-message-ttl or a
// message-ttl policy) into a dead-letter exchange waits and sends them on;
// where it sends them is a main queue, and it is no parking lot itself.
func isDelayQueue(q broker.QueueInfo) bool {
	_, dl := deadLetterOf(q)
	_, ttl := q.Arguments["x-message-ttl"]
	_, pttl := q.EffectivePolicy["message-ttl"]
	return dl && (ttl || pttl)
}

// deadLetterTargets finds the queues other queues dead-letter into, from
// the broker's own routing: each queue's dead-letter exchange and routing
// key (argument or policy), routed through the exchange's bindings (the
// route preview). Without a dead-letter routing key the messages keep
// their own routing keys, so every queue bound to a named dead-letter
// exchange counts. The result maps a queue to why; lookups that fail are
// passed over (the name rule still applies).
func deadLetterTargets(ctx context.Context, m *broker.Management, qs []broker.QueueInfo) map[string]string {
	exists := make(map[string]broker.QueueInfo, len(qs))
	for _, q := range qs {
		exists[q.Name] = q
	}
	out := map[string]string{}
	mark := func(target string, src broker.QueueInfo, d deadLetter) {
		t, ok := exists[target]
		if !ok || target == src.Name || isDelayQueue(t) || out[target] != "" {
			return
		}
		out[target] = fmt.Sprintf("dead-letter target of %s (%s %s)", src.Name, d.from, broker.Destination(d.exchange, d.routingKey))
	}
	for _, q := range qs {
		d, ok := deadLetterOf(q)
		if !ok || isDelayQueue(q) {
			continue
		}
		switch {
		case d.exchange == "" && d.hasKey:
			mark(d.routingKey, q, d)
		case d.exchange == "":
			// The default exchange with the message's own routing key:
			// not known from the queue.
		case d.hasKey:
			if r, err := m.PreviewRoute(ctx, d.exchange, d.routingKey, nil); err == nil {
				for _, t := range r.Queues {
					mark(t, q, d)
				}
			}
		default:
			bs, err := m.Bindings(ctx, d.exchange)
			if err != nil {
				continue
			}
			for _, b := range bs {
				if b.DestinationType == "queue" {
					mark(b.Destination, q, d)
				}
			}
		}
	}
	return out
}

// LooksLikeParkingLot reports whether a queue name follows a parking-lot
// convention: ours and RabbitMQ users' (*.dlq, *dead-letter*, *parking*),
// MassTransit's (*_error) and others' (*.error*).
func LooksLikeParkingLot(name string) bool {
	n := strings.ToLower(name)
	switch {
	case strings.HasSuffix(n, ".dlq"), strings.HasSuffix(n, "-dlq"), strings.HasSuffix(n, "_dlq"),
		strings.HasSuffix(n, "_error"), strings.HasSuffix(n, "_skipped"),
		strings.Contains(n, "dead-letter"), strings.Contains(n, "deadletter"), strings.Contains(n, "dead_letter"),
		strings.Contains(n, ".error"), strings.Contains(n, "parking"):
		return true
	}
	return false
}
