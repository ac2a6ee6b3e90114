package retrycore

import (
	"context"
	"fmt"
	"sort"
	"sync"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker"
)

// Sources of the facts read from frameworks' own headers (README, "Headers").
const (
	// SourceRascalError is the error text's source for rascal's nested
	// rascal.error.message.
	SourceRascalError = "rascal.error.message"
	// SourceRascal is the origin's source for rascal's
	// rascal.originalExchange / originalRoutingKey.
	SourceRascal = "rascal originalExchange/originalRoutingKey"
)

// HeaderRascal is the one table header rascal keeps its recovery state in:
// originalExchange, originalRoutingKey, originalQueue, error.message,
// error.code, recovery.<queue>.republished / forwarded, redeliveries.
const HeaderRascal = "rascal"

// rascalValue reads a value inside rascal's table header by its path of
// keys (each key whole: queue names in recovery contain dots).
func rascalValue(h amqp.Table, path ...string) any {
	t, ok := asTable(h[HeaderRascal])
	if !ok {
		return nil
	}
	for i, k := range path {
		v, present := t[k]
		if !present {
			return nil
		}
		if i == len(path)-1 {
			return v
		}
		if t, ok = asTable(v); !ok {
			return nil
		}
	}
	return nil
}

// rascalRecovery returns rascal's recovery counter (republished or
// forwarded) for queue, or when queue is empty or has no entry, the
// largest over the queues it names, with the queue it belongs to.
func rascalRecovery(h amqp.Table, queue, counter string) (int64, string, bool) {
	rec, ok := asTable(rascalValue(h, "recovery"))
	if !ok {
		return 0, "", false
	}
	if e, ok := asTable(rec[queue]); ok && queue != "" {
		if n, ok := asInt(e[counter]); ok && n >= 0 {
			return n, queue, true
		}
	}
	keys := make([]string, 0, len(rec))
	for k := range rec {
		keys = append(keys, k)
	}
	sort.Strings(keys) // a stable answer whatever the map order
	var best int64 = -1
	var bestQ string
	for _, k := range keys {
		if e, ok := asTable(rec[k]); ok {
			if n, ok := asInt(e[counter]); ok && n > best {
				best, bestQ = n, k
			}
		}
	}
	return best, bestQ, best >= 0
}

// isCelery reports whether the headers are Celery's task protocol 2: a
// task name in "task" and the task id in "id".
func isCelery(h amqp.Table) bool {
	s, ok := asString(h["task"])
	return ok && s != ""
}

// DeliveryLimits looks up the delivery limit a quorum queue applies, for the
// attempts of a message it dead-lettered with reason delivery_limit.
type DeliveryLimits interface {
	DeliveryLimit(ctx context.Context, queue string) (broker.DeliveryLimit, error)
}

// QueueInfos reads a queue as the management API reports it
// (*broker.Management implements it).
type QueueInfos interface {
	Queue(ctx context.Context, name string) (broker.QueueInfo, error)
}

// NewDeliveryLimits returns DeliveryLimits over the management API: the
// effective limit (x-delivery-limit argument, policy, operator policy, the
// 4.x default) as broker.EffectiveDeliveryLimit works it out for server,
// cached per queue for the DeliveryLimits' life.
func NewDeliveryLimits(q QueueInfos, server broker.Version) DeliveryLimits {
	return &limitCache{q: q, server: server, m: map[string]limitAnswer{}}
}

type limitAnswer struct {
	l   broker.DeliveryLimit
	err error
}

type limitCache struct {
	q      QueueInfos
	server broker.Version
	mu     sync.Mutex
	m      map[string]limitAnswer
}

func (c *limitCache) DeliveryLimit(ctx context.Context, queue string) (broker.DeliveryLimit, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if a, ok := c.m[queue]; ok {
		return a.l, a.err
	}
	info, err := c.q.Queue(ctx, queue)
	var l broker.DeliveryLimit
	if err == nil {
		l = broker.EffectiveDeliveryLimit(info, c.server)
	}
	if ctx.Err() == nil {
		c.m[queue] = limitAnswer{l, err}
	}
	return l, err
}

// attempts is how many times a handler saw a parked message, the failure
// that parked it included. The first convention the headers carry decides:
//
//   - x-retry-count N (parkinglot, and consumers such as the usual pika
//     pattern that count their republished retries in it): N + 1. N counts
//     the failed runs that were retried; the run that parked the message
//     (by parkinglot's park copy or by a reject into a dead-letter
//     exchange) is the 1.
//   - rascal's rascal.recovery.<originalQueue>.republished R: R + 1, the
//     run that was forwarded or nacked after the last republish.
//   - Celery's retries R (with a task header): R + 1, the run that raised
//     Reject.
//   - x-death alone (NestJS/golevelup, kombu, amqplib loops, quorum
//     queues): in the queue that failed (x-first-death-queue when it has a
//     rejected or delivery_limit entry, else the queue with most of them),
//     each rejection is one run, and each delivery_limit death is the
//     queue's delivery limit + 1 runs (RabbitMQ dead-letters a message
//     whose delivery count exceeds the limit; the limit is looked up
//     through limits, and without it the number is a lower bound, said so
//     in the source). When the newest entry — x-death's first, its own
//     order, whatever the times say — is an expiry in another queue, the
//     message came back from a delay queue and ran once more before its
//     consumer parked it: + 1. A requeue (basic.nack/reject with requeue)
//     on a classic queue leaves no trace in the message and is not counted.
//   - otherwise 0, with no source.
//
// x-delivery-count is not read: on a parking lot it counts parkinglot's own
// browses of a quorum queue, not handler runs.
func attempts(ctx context.Context, h amqp.Table, deaths []Death, first DeathRef, limits DeliveryLimits) (int64, string) {
	if v, present := h[HeaderRetryCount]; present {
		if n, ok := asInt(v); ok && n >= 0 {
			return sat(n, 1), fmt.Sprintf("%s %d + 1 (the run that parked it)", HeaderRetryCount, n)
		}
	}
	origQueue, _ := asString(rascalValue(h, "originalQueue"))
	if n, _, ok := rascalRecovery(h, origQueue, "republished"); ok {
		return sat(n, 1), fmt.Sprintf("rascal republished %d + 1", n)
	}
	if isCelery(h) {
		if n, ok := asInt(h["retries"]); ok && n >= 0 {
			return sat(n, 1), fmt.Sprintf("celery retries %d + 1", n)
		}
	}
	return deathAttempts(ctx, deaths, first, limits)
}

// deathAttempts is attempts' x-death rule.
func deathAttempts(ctx context.Context, deaths []Death, first DeathRef, limits DeliveryLimits) (int64, string) {
	type tally struct{ rejected, limited int64 }
	per := map[string]*tally{}
	var order []string
	for _, d := range deaths {
		if d.Reason != "rejected" && d.Reason != "delivery_limit" || d.Count <= 0 {
			continue
		}
		t := per[d.Queue]
		if t == nil {
			t = &tally{}
			per[d.Queue] = t
			order = append(order, d.Queue)
		}
		if d.Reason == "rejected" {
			t.rejected = sat(t.rejected, d.Count)
		} else {
			t.limited = sat(t.limited, d.Count)
		}
	}
	if len(order) == 0 {
		return 0, ""
	}
	q := first.Queue
	if per[q] == nil {
		q = order[0]
		for _, k := range order[1:] {
			if a, b := per[k], per[q]; sat(a.rejected, a.limited) > sat(b.rejected, b.limited) {
				q = k
			}
		}
	}
	t := per[q]
	n := t.rejected
	var parts []string
	if t.rejected > 0 {
		word := "rejections"
		if t.rejected == 1 {
			word = "rejection"
		}
		parts = append(parts, fmt.Sprintf("x-death: %d %s in %s", t.rejected, word, q))
	}
	if t.limited > 0 {
		lim, known := broker.DeliveryLimit{}, false
		if limits != nil {
			if l, err := limits.DeliveryLimit(ctx, q); err == nil && !l.Unlimited() && l.Limit >= 0 {
				lim, known = l, true
			}
		}
		if known {
			n = sat(n, mul(t.limited, sat(lim.Limit, 1)))
			s := fmt.Sprintf("x-death delivery_limit in %s: limit %d (%s) + 1", q, lim.Limit, lim.Source)
			if t.limited > 1 {
				s = fmt.Sprintf("x-death delivery_limit ×%d in %s: %d × (limit %d (%s) + 1)", t.limited, q, t.limited, lim.Limit, lim.Source)
			}
			parts = append(parts, s)
		} else {
			n = sat(n, t.limited)
			parts = append(parts, fmt.Sprintf("x-death delivery_limit in %s: at least %d (its delivery limit is not known)", q, t.limited))
		}
	}
	src := parts[0]
	for _, p := range parts[1:] {
		src += "; " + p
	}
	if d := deaths[0]; d.Reason == "expired" && d.Queue != q {
		n = sat(n, 1)
		src += " + 1 after the last delay in " + d.Queue
	}
	return n, src
}

// sat adds without overflow (counts come from headers anyone can write).
func sat(a, b int64) int64 {
	if a > 1<<62 || b > 1<<62 || a+b > 1<<62 {
		return 1 << 62
	}
	return a + b
}

func mul(a, b int64) int64 {
	if a != 0 && b > (1<<62)/a {
		return 1 << 62
	}
	return a * b
}

// ResetBudget gives a replayed copy a fresh retry budget in every
// convention parkinglot reads (README, "Headers"): it removes x-death,
// x-first-death-*, x-last-death-*, x-retry-count and x-delivery-count,
// rascal's recovery counters (rascal.recovery, and rascal.redeliveries set
// to 0), and sets Celery's retries to 0 (of the same integer type). h is the
// copy's own table and is changed in place; a nested table is replaced by an
// edited clone, never edited in place, so the message it was copied from
// keeps its values. It returns what it reset, in words, for the report.
func ResetBudget(h amqp.Table) (reset []string) {
	if h == nil {
		return nil
	}
	drop := func(k, name string) {
		if _, ok := h[k]; ok {
			delete(h, k)
			reset = append(reset, name)
		}
	}
	drop(HeaderDeath, HeaderDeath)
	for _, group := range []string{"x-first-death-", "x-last-death-"} {
		found := false
		for _, suffix := range []string{"queue", "reason", "exchange"} {
			if _, ok := h[group+suffix]; ok {
				delete(h, group+suffix)
				found = true
			}
		}
		if found {
			reset = append(reset, group+"*")
		}
	}
	drop(HeaderRetryCount, HeaderRetryCount)
	drop(HeaderDeliveryCount, HeaderDeliveryCount)
	drop(HeaderAcquiredCount, HeaderAcquiredCount)

	if r, ok := asTable(h[HeaderRascal]); ok {
		r = broker.CloneTable(r)
		changed := false
		if rec, ok := asTable(r["recovery"]); ok {
			keys := make([]string, 0, len(rec))
			for k := range rec {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, q := range keys {
				e, _ := asTable(rec[q])
				for _, c := range []string{"republished", "forwarded"} {
					if _, ok := e[c]; ok {
						reset = append(reset, fmt.Sprintf("rascal.recovery[%q].%s", q, c))
					}
				}
			}
			delete(r, "recovery")
			changed = true
		}
		if n, ok := asInt(r["redeliveries"]); ok && n != 0 {
			r["redeliveries"] = zeroLike(r["redeliveries"])
			reset = append(reset, "rascal.redeliveries")
			changed = true
		}
		if changed {
			h[HeaderRascal] = r
		}
	}
	if isCelery(h) {
		if n, ok := asInt(h["retries"]); ok && n != 0 {
			h["retries"] = zeroLike(h["retries"])
			reset = append(reset, "celery retries")
		}
	}
	return reset
}

// zeroLike is 0 of v's integer type, so a framework reading the header
// finds the type it wrote.
func zeroLike(v any) any {
	switch v.(type) {
	case int8:
		return int8(0)
	case uint8:
		return uint8(0)
	case int16:
		return int16(0)
	case uint16:
		return uint16(0)
	case int32:
		return int32(0)
	case uint32:
		return uint32(0)
	case int64:
		return int64(0)
	case int:
		return 0
	case string:
		return "0"
	}
	return int32(0)
}

// RecordOrigin writes o into the copy's headers as the contract's
// x-original-exchange / x-original-routing-key (and x-original-queue when
// o names the failed queue), replacing what was there, so a copy sent to
// the failed queue alone (replay --target queue) still knows its true
// origin when it fails again (README, "Where a replay goes"). h is changed
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
