//go:build chaos && integration

package daemon

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker/brokertest"
	"github.com/parkinglot/parkinglot/broker/brokertest/clustertest"
	"github.com/parkinglot/parkinglot/retrycore"
	"github.com/parkinglot/parkinglot/retrycore/retrytest"
)

// Transient messages parked in a classic parking lot are all there after a
// broker restart, which drops transient messages from classic queues (a
// control queue shows it). It restarts the broker: build tag chaos.
func TestChaosDaemonTransientParkedSurvivesRestart(t *testing.T) {
	const n = 3
	p := retrytest.Pipeline(t, retrycore.QueueClassic, time.Minute)
	l := startLoop(t, p, HandlerFunc(func(context.Context, Delivery) error {
		return Permanent(errors.New("cannot parse"))
	}), nil)
	ch := brokertest.Channel(t)
	msgs := make([]amqp.Publishing, n)
	for i := range msgs {
		msgs[i] = amqp.Publishing{MessageId: fmt.Sprintf("transient-%d", i), DeliveryMode: amqp.Transient, Body: []byte("x")}
	}
	brokertest.PublishMany(t, ch, p.Main.Exchange, p.Main.RoutingKey, msgs)
	for _, r := range l.collect(func(all []Result) bool { return len(all) == n }) {
		if r.Outcome != OutcomeLabelParked {
			t.Fatalf("result %+v, want parked", r)
		}
	}
	if err := l.stop(); err != nil {
		t.Fatal(err)
	}
	control := brokertest.Name(t, "control")
	brokertest.DeclareQueue(t, ch, control, amqp.Table{"x-queue-type": retrycore.QueueClassic})
	brokertest.Publish(t, ch, "", control, amqp.Publishing{DeliveryMode: amqp.Transient, Body: []byte("x")})

	away := clustertest.RestartApp(t)

	ch = brokertest.Channel(t)
	if brokertest.Depth(t, ch, control) != 0 {
		t.Logf("this broker kept a transient message through the restart too (away %v): the test proves less", away)
	}
	parked := brokertest.Drain(t, ch, p.Error.Queue)
	if len(parked) != n {
		t.Fatalf("%d of %d parked messages left after a broker restart (away %v)", len(parked), n, away)
	}
	for _, d := range parked {
		if d.DeliveryMode != amqp.Persistent || d.Headers[retrycore.HeaderOriginalDeliveryMode] != int32(amqp.Transient) {
			t.Errorf("%s: delivery mode %d, %s %#v", d.MessageId, d.DeliveryMode, retrycore.HeaderOriginalDeliveryMode, d.Headers[retrycore.HeaderOriginalDeliveryMode])
		}
	}
}
