package broker

import (
	"context"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// How a pass asks the queue whether it is at its end.

// readyCount is the queue's ready count from a passive declare. A quorum
// queue that does not answer within 250 ms is reported as empty
// (rabbit_quorum_queue:stat/1 returns {ok, 0, 0} on a timeout; seen on
// 3.10.8 under load, and right after a pass refreshed messages), so on a
// queue that may be quorum a 0 is asked again for up to a second. The
// management API's count is no help here: its statistics lag by seconds.
func readyCount(ctx context.Context, ch *amqp.Channel, f QueueFacts) (int, error) {
	q, err := readyCounts(ctx, ch, f)
	return q.Messages, err
}

// readyCounts is readyCount with the queue's consumer count of the same
// answer.
func readyCounts(ctx context.Context, ch *amqp.Channel, f QueueFacts) (amqp.Queue, error) {
	q, err := ch.QueueDeclarePassive(f.Name, false, false, false, false, nil)
	if err != nil || q.Messages > 0 || f.Type == "classic" {
		return q, err
	}
	for i := 1; i <= 4; i++ {
		t := time.NewTimer(time.Duration(i) * 100 * time.Millisecond)
		select {
		case <-ctx.Done():
			t.Stop()
			return q, ctx.Err()
		case <-t.C:
		}
		if q, err = ch.QueueDeclarePassive(f.Name, false, false, false, false, nil); err != nil || q.Messages > 0 {
			return q, err
		}
	}
	return q, nil
}

// unanswered: a quorum queue's answer of nothing ready and no consumer
// while the pass's own consumer is open is no answer. Its leader did not
// reply in time (rabbit_quorum_queue:stat/1 then says 0 and 0: seen while
// a cluster elected a new leader), and ending the pass on it would leave
// most of the queue unread as if it were done.
func (p *Pass) unanswered(counts amqp.Queue) bool {
	return p.facts.Type != "classic" && counts.Consumers == 0 && !p.current().cancelled
}
