package broker

import (
	"strings"
	"time"
)

// DelayedRetry is a quorum queue's delayed retry (RabbitMQ 4.3+: the
// x-delayed-retry-* arguments or the delayed-retry-* policy keys): a
// message returned to the queue is held back, invisible to consumers and
// to the queue's ready count, for a delay between Min and Max.
type DelayedRetry struct {
	// Type is disabled, all, failed or returned ("" when none is set).
	Type     string
	Min, Max time.Duration
	Source   string // "x-delayed-retry-type argument", "policy p"
}

// DelaysNack reports whether a basic.nack(requeue), a pass's give-back,
// is delayed: measured on 4.3.6, "all" delays a nack, a reject and a
// closed channel; "returned" a nack and a reject, not a closed channel;
// "failed" a reject and a closed channel, not a nack.
func (d DelayedRetry) DelaysNack() bool { return d.Type == "all" || d.Type == "returned" }

// Longest is the longest a return is held back (0: no delay set).
func (d DelayedRetry) Longest() time.Duration { return max(d.Min, d.Max) }

// ShortDelay is the longest delayed retry a pass waits out before it
// begins, when the queue holds delayed messages: so short a wait costs a
// person less than a list that leaves messages out.
const ShortDelay = 10 * time.Second

// On reports whether the queue delays any return.
func (d DelayedRetry) On() bool { return d.Type != "" && d.Type != "disabled" }

// QueueDelayedRetry reads a queue's delayed retry from its arguments, or
// else its effective policy (the argument wins, as for other quorum queue
// settings a queue declares itself).
func QueueDelayedRetry(q QueueInfo) DelayedRetry {
	if q.Type != "quorum" {
		return DelayedRetry{}
	}
	read := func(get func(string) any, prefix, source string) (DelayedRetry, bool) {
		t, ok := get(prefix + "type").(string)
		if !ok || t == "" {
			return DelayedRetry{}, false
		}
		d := DelayedRetry{Type: strings.ToLower(t), Source: source}
		if n, ok := toInt64(get(prefix + "min")); ok {
			d.Min = time.Duration(n) * time.Millisecond
		}
		if n, ok := toInt64(get(prefix + "max")); ok {
			d.Max = time.Duration(n) * time.Millisecond
		}
		return d, true
	}
	if d, ok := read(func(k string) any { return q.Arguments[k] }, "x-delayed-retry-", "x-delayed-retry-type argument"); ok {
		return d
	}
	if d, ok := read(func(k string) any { return q.EffectivePolicy[k] }, "delayed-retry-", "policy "+q.Policy); ok {
		return d
	}
	return DelayedRetry{}
}
