//go:build integration

package replay_test

import (
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker/brokertest"
	"github.com/parkinglot/parkinglot/replay"
)

// TestARateLimitedReplayOutlastsTheQueuesConsumerTimeout: a replay at 3
// messages a second of 36 messages takes 12 s; the parking lot's own
// consumer timeout (x-consumer-timeout, RabbitMQ 3.12+) is 8 s. A pass
// that held the lot for the whole run would have its consumer ended by
// the broker mid-run (a cancel on 4.3's quorum queues, a closed channel
// before), each held message returned with a delivery counted. The run
// holds nothing past half the timeout instead: every message sent once,
// the lot empty, and no pass ended by the broker. 3.10 has no per-queue
// timeout (its broker-wide 30 minutes applies): the same run, one pass.
func TestARateLimitedReplayOutlastsTheQueuesConsumerTimeout(t *testing.T) {
	const n = 36
	ch := brokertest.Channel(t)
	q := brokertest.Name(t, "dlq")
	dst := brokertest.Name(t, "dst")
	args := amqp.Table{"x-queue-type": "quorum"}
	if brokertest.Version(t).AtLeast(3, 12, 0) {
		args["x-consumer-timeout"] = int32(8000)
	}
	brokertest.DeclareQueue(t, ch, q, args)
	brokertest.DeclareQueue(t, ch, dst, nil)
	parkPlain(t, ch, q, n)

	s, _ := openSession(t, replay.Config{})
	start := time.Now()
	res, err := s.Replay(testCtx(t, 2*time.Minute), replay.Options{Queue: q, Select: replay.Selector{All: true}, To: dest("", dst), Rate: 3})
	if err != nil || res.Done != n || res.Failed != 0 {
		t.Fatalf("replay: %v, result %+v: want %d done", err, res, n)
	}
	for _, note := range res.Notes {
		if note.Kind == replay.NoteReconnect {
			t.Errorf("a pass was ended mid-run (%v): it held the lot past the consumer timeout", note.Err)
		}
	}
	t.Logf("%d messages at --rate 3 under an 8 s consumer timeout: %v", n, time.Since(start))
	brokertest.WaitDepth(t, dst, n, 15*time.Second)
	brokertest.WaitDepth(t, q, 0, 15*time.Second)
}
