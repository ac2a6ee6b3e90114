//go:build integration

package replay_test

import (
	"fmt"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker/brokertest"
	"github.com/parkinglot/parkinglot/replay"
	"github.com/parkinglot/parkinglot/retrycore"
)

// TestAPlanRightAfterABrowseSeesEveryMessage: a browse gives its messages
// back as it ends, and the queue requeues them a moment later; a plan of
// --all opened at once (the TUI's R after a list, a canary's last step
// after its watch) must still choose every message (a plan only: the
// destination, the queue itself, is never sent to), on classic and
// quorum queues, twenty times in a row. 2,000 messages: without the wait
// the plan chose 497 of them on a quorum queue of 3.10.8.
func TestAPlanRightAfterABrowseSeesEveryMessage(t *testing.T) {
	const n = 2000
	for _, typ := range []string{"classic", "quorum"} {
		t.Run(typ, func(t *testing.T) {
			ch := brokertest.Channel(t)
			q := brokertest.Name(t, "dlq")
			brokertest.DeclareQueue(t, ch, q, amqp.Table{"x-queue-type": typ})
			msgs := make([]amqp.Publishing, n)
			for i := range msgs {
				msgs[i] = amqp.Publishing{MessageId: fmt.Sprintf("m-%02d", i), Body: []byte(`{}`), DeliveryMode: amqp.Persistent}
			}
			brokertest.PublishMany(t, ch, "", q, msgs)
			brokertest.WaitDepth(t, q, n, 10*time.Second)
			s, _ := openSession(t, replay.Config{})
			for round := range 20 {
				if _, err := s.Browse(testCtx(t, 30*time.Second), replay.BrowseOptions{Queue: q, StreamOnly: true, OnBatch: func([]replay.Summary) {}}); err != nil {
					t.Fatal(err)
				}
				plan, err := s.Plan(testCtx(t, 30*time.Second), replay.Options{Queue: q, Select: replay.Selector{All: true}, To: &retrycore.Destination{RoutingKey: q}})
				if err != nil {
					t.Fatal(err)
				}
				if plan.Chosen != n {
					t.Fatalf("round %d: the plan right after a browse chose %d of %d (refused %d, seen %d, notes %v)", round, plan.Chosen, n, plan.RefusedCount, plan.Report.Seen, plan.Notes)
				}
			}
		})
	}
}
