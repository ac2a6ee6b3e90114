//go:build integration

package replay_test

import (
	"context"
	"errors"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/broker/brokertest"
	"github.com/parkinglot/parkinglot/replay"
	"github.com/parkinglot/parkinglot/retrycore"
	"github.com/parkinglot/parkinglot/retrycore/daemon"
	"github.com/parkinglot/parkinglot/retrycore/retrytest"
)

// The daemon parks every message persistent; a replay gives the origin the
// delivery mode its producer sent, without x-original-delivery-mode. A
// message parked without the header (by another consumer) keeps its own.
func TestReplayGivesTheOriginTheDeliveryModeTheProducerSent(t *testing.T) {
	p := retrytest.Pipeline(t, retrycore.QueueClassic, time.Minute)
	ch := brokertest.Channel(t)
	parkThroughTheDaemon(t, p, []amqp.Publishing{
		{MessageId: "transient", DeliveryMode: amqp.Transient, Body: []byte("t")},
		{MessageId: "none-set", Body: []byte("0")},
		{MessageId: "persistent", DeliveryMode: amqp.Persistent, Body: []byte("p")},
	}) // persistent in the parking lot (retrycore/daemon's tests)
	origin := amqp.Table{retrycore.HeaderOriginalExchange: p.Main.Exchange, retrycore.HeaderOriginalRoutingKey: p.Main.RoutingKey}
	brokertest.Publish(t, ch, "", p.Error.Queue, amqp.Publishing{MessageId: "parked-elsewhere", DeliveryMode: amqp.Transient, Headers: origin, Body: []byte("e")})

	s, _ := openSession(t, replay.Config{})
	res, err := s.Replay(testCtx(t, time.Minute), replay.Options{Queue: p.Error.Queue, Select: replay.Selector{All: true}})
	if err != nil || res.Done != 4 {
		t.Fatalf("replay: %v %+v", err, res)
	}
	want := map[string]uint8{"transient": amqp.Transient, "none-set": 0, "persistent": amqp.Persistent, "parked-elsewhere": amqp.Transient}
	got := drainAll(t, ch, p.Main.Queue, len(want))
	if len(got) != len(want) {
		t.Fatalf("%d copies at the origin, want %d", len(got), len(want))
	}
	for _, d := range got {
		if w, ok := want[d.MessageId]; !ok || d.DeliveryMode != w {
			t.Errorf("%s: delivery mode %d at the origin, want %d", d.MessageId, d.DeliveryMode, w)
		}
		if v, ok := d.Headers[retrycore.HeaderOriginalDeliveryMode]; ok {
			t.Errorf("%s: the copy still carries %s = %#v", d.MessageId, retrycore.HeaderOriginalDeliveryMode, v)
		}
		if n, _ := d.Headers[retrycore.HeaderReplayCount].(int32); n != 1 {
			t.Errorf("%s: x-replay-count %#v: not a replayed copy", d.MessageId, d.Headers[retrycore.HeaderReplayCount])
		}
	}
}

// parkThroughTheDaemon runs the daemon on p with a handler that fails
// every message permanently until msgs are parked, then stops it.
func parkThroughTheDaemon(t *testing.T, p retrycore.Pipeline, msgs []amqp.Publishing) {
	t.Helper()
	settled := make(chan daemon.Result, len(msgs))
	consuming := make(chan int, 10)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- daemon.Run(ctx, daemon.RunOptions{
			Pipeline:    p,
			Broker:      broker.Options{URL: brokertest.URL(), Name: brokertest.Name(t, "daemon")},
			OnSettled:   func(r daemon.Result) { settled <- r },
			OnConsuming: func(n int) { consuming <- n },
		}, daemon.HandlerFunc(func(context.Context, daemon.Delivery) error {
			return daemon.Permanent(errors.New("cannot parse"))
		}))
	}()
	stop := func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("daemon: %v", err)
		}
	}
	defer stop()
	select {
	case <-consuming:
	case err := <-done:
		t.Fatalf("the daemon stopped before consuming: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("the daemon did not start consuming")
	}
	brokertest.PublishMany(t, brokertest.Channel(t), p.Main.Exchange, p.Main.RoutingKey, msgs)
	for range msgs {
		select {
		case r := <-settled:
			if r.Outcome != daemon.OutcomeLabelParked {
				t.Fatalf("%s: %s, want parked", r.MessageID, r.Outcome)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("the daemon parked too few messages within 30s")
		}
	}
}
