package retrycore

import (
	"context"
	"fmt"
	"strconv"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker"
)

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
			// Concatenated, not formatted: every message a replay reads comes here.
			return sat(n, 1), HeaderRetryCount + " " + strconv.FormatInt(n, 10) + " + 1 (the run that parked it)"
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
