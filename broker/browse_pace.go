package broker

import (
	"fmt"
)

// pushWindow is how many deliveries a classic queue's pass lets the broker
// push beyond what the caller holds. Without a bound the broker pushes the
// whole queue at once, and whatever the caller has not yet taken waits in
// amqp091-go's unbounded buffer: a 100k-message replay, slower than the
// broker's push, held tens of thousands of deliveries there, and spent its
// CPU collecting them.
const pushWindow = 2048

// pace keeps the channel's prefetch pushWindow ahead of the messages the
// caller holds (taken with Next, not acked), so the pass never stalls on
// it, and within the pass's target (RabbitMQ counts unacked deliveries: a
// limit of target - taken keeps the pushed total within target). It is
// raised in steps of half a window, one basic.qos round trip each.
func (p *Pass) pace() error {
	p.mu.Lock()
	held, taken := p.seen-p.taken, p.taken
	p.mu.Unlock()
	if held+pushWindow/2 <= p.limit {
		return nil
	}
	want := min(held+pushWindow, p.target-taken)
	if want <= p.limit {
		return nil
	}
	if want > 65535 {
		// Past amqp091-go's largest prefetch: unlimited for the rest (no
		// more than target - taken remain to be pushed).
		want, p.paced = 0, false
	}
	if err := p.ch.Qos(want, 0, true); err != nil {
		return fmt.Errorf("browse %s: qos: %w", p.facts.Name, Explain(err))
	}
	p.limit = want
	return nil
}

