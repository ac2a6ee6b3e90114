package replay_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker/brokertest"
	"github.com/parkinglot/parkinglot/replay"
	"github.com/parkinglot/parkinglot/retrycore"
)

// The TUI hands the engine its selection as a compact IDSet (Selector.Chosen).
// 4,600 ids of 250 bytes are past the 1 MiB the set keeps in memory, so
// the ids are read back from its file: exactly the chosen messages move,
// the others stay parked, and a chosen id that is not there is reported.
func TestReplayOfAChosenSetMovesExactlyThoseMessages(t *testing.T) {
	const n, chosen = 5000, 4600
	ch := brokertest.Channel(t)
	parking, target := brokertest.Name(t, "dlq"), brokertest.Name(t, "origin")
	brokertest.DeclareQueue(t, ch, parking, nil)
	brokertest.DeclareQueue(t, ch, target, nil)
	longID := func(i int) string { return fmt.Sprintf("%s-%05d", strings.Repeat("k", 243), i) }
	publishN(t, ch, "", parking, n, func(i int) amqp.Publishing {
		return amqp.Publishing{MessageId: longID(i), DeliveryMode: amqp.Persistent, Body: []byte("x"),
			Headers: amqp.Table{retrycore.HeaderOriginalExchange: "", retrycore.HeaderOriginalRoutingKey: target}}
	})
	brokertest.WaitDepth(t, parking, n, 15*time.Second)

	set := replay.NewIDSet()
	defer set.Close()
	for i := range chosen {
		if err := set.Add(longID(i * n / chosen)); err != nil { // spread over the queue
			t.Fatal(err)
		}
	}
	if err := set.Add("not-parked"); err != nil {
		t.Fatal(err)
	}
	if err := set.Seal(); err != nil {
		t.Fatal(err)
	}
	s, _ := openSession(t, replay.Config{})
	res, err := s.Replay(testCtx(t, 2*time.Minute), replay.Options{Queue: parking, Select: replay.Selector{Chosen: set}})
	if err != nil || !errors.Is(res.Err(), replay.ErrNotAllDone) {
		t.Fatalf("replay: %v, result %v: want the absent id not done", err, res.Err())
	}
	if res.Done != chosen || res.Failed != 1 || len(res.Failures) != 1 || res.Failures[0].ID != "not-parked" || !strings.Contains(res.Failures[0].Err, "no message") {
		t.Fatalf("done %d, failed %d (%+v); want %d done and the absent id not found", res.Done, res.Failed, res.Failures, chosen)
	}
	brokertest.WaitDepth(t, target, chosen, 15*time.Second)
	brokertest.WaitDepth(t, parking, n-chosen, 15*time.Second)
	want := map[string]bool{}
	for i := range chosen {
		want[longID(i*n/chosen)] = true
	}
	for _, d := range brokertest.Drain(t, ch, parking) {
		if want[d.MessageId] {
			t.Fatalf("chosen message %s is still parked", d.MessageId[240:])
		}
	}
}
