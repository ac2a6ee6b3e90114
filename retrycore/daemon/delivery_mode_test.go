//go:build integration

package daemon

import (
	"context"
	"errors"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/broker/brokertest"
	"github.com/parkinglot/parkinglot/retrycore"
	"github.com/parkinglot/parkinglot/retrycore/retrytest"
)

// A parked copy is persistent whatever the producer sent, so a broker
// restart cannot drop it from a classic parking lot; the producer's mode,
// when it was not persistent, is in x-original-delivery-mode. An id-less
// message keeps the content id the daemon logged.
func TestRunParksATransientMessagePersistentWithItsModeInAHeader(t *testing.T) {
	p := retrytest.Pipeline(t, retrycore.QueueClassic, time.Minute)
	l := startLoop(t, p, HandlerFunc(func(context.Context, Delivery) error {
		return Permanent(errors.New("cannot parse"))
	}), nil)
	cases := map[string]struct { // by body
		id     string
		mode   uint8
		header any // x-original-delivery-mode; nil: absent
	}{
		"transient":        {"mode-t", amqp.Transient, int32(1)},
		"none set":         {"mode-0", 0, int32(0)},
		"persistent":       {"mode-p", amqp.Persistent, nil},
		"transient, no id": {"", amqp.Transient, int32(1)},
	}
	ch := brokertest.Channel(t)
	for body, c := range cases {
		brokertest.Publish(t, ch, p.Main.Exchange, p.Main.RoutingKey, amqp.Publishing{MessageId: c.id, DeliveryMode: c.mode, Headers: amqp.Table{"tenant": "acme"}, Body: []byte(body)})
	}
	logged := map[string]bool{}
	for _, r := range l.collect(func(all []Result) bool { return len(all) == len(cases) }) {
		if r.Outcome != OutcomeLabelParked {
			t.Fatalf("result %+v, want parked", r)
		}
		logged[r.MessageID] = true
	}
	if err := l.stop(); err != nil {
		t.Fatal(err)
	}
	parked := brokertest.Drain(t, ch, p.Error.Queue)
	if len(parked) != len(cases) {
		t.Fatalf("the parking lot holds %d messages, want %d", len(parked), len(cases))
	}
	for _, d := range parked {
		body := string(d.Body)
		if d.DeliveryMode != amqp.Persistent {
			t.Errorf("%s: parked with delivery mode %d, want persistent (2)", body, d.DeliveryMode)
		}
		got, ok := d.Headers[retrycore.HeaderOriginalDeliveryMode]
		if w := cases[body].header; got != w || ok != (w != nil) {
			t.Errorf("%s: %s = %#v, want %#v", body, retrycore.HeaderOriginalDeliveryMode, got, w)
		}
		if d.Headers["tenant"] != "acme" || d.Headers[retrycore.HeaderFailureKind] != retrycore.KindPermanent {
			t.Errorf("%s: headers %v", body, d.Headers)
		}
		if id := broker.FromDelivery(d).ID(); !logged[id] {
			t.Errorf("%s: the parking lot lists it as %s, which the daemon never reported (%v)", body, id, logged)
		}
	}
}

// A copy waiting in a delay tier is persistent too, and the producer's
// mode recorded at the first failure survives the trip back to the main
// queue, where the copy arrives persistent.
func TestRunRetriesATransientMessagePersistentThroughTheDelayTier(t *testing.T) {
	p := retrytest.Pipeline(t, retrycore.QueueClassic, 200*time.Millisecond, time.Hour)
	var calls callLog
	l := startLoop(t, p, HandlerFunc(func(_ context.Context, d Delivery) error {
		calls.add(d)
		return errors.New("not yet")
	}), nil)
	brokertest.Publish(t, brokertest.Channel(t), p.Main.Exchange, p.Main.RoutingKey, amqp.Publishing{MessageId: "t", DeliveryMode: amqp.Transient, Body: []byte("x")})
	long := p.Tiers()[1].Queue
	if r1, r2 := l.next(), l.next(); r1.Outcome != OutcomeLabelRetried || r2.Outcome != OutcomeLabelRetried || r2.Tier != long {
		t.Fatalf("results %+v / %+v, want two retries, the second to %s", r1, r2, long)
	}
	if err := l.stop(); err != nil {
		t.Fatal(err)
	}
	if seen := calls.of("t"); len(seen) != 2 || seen[1].Headers[retrycore.HeaderOriginalDeliveryMode] != int32(1) {
		t.Fatalf("the handler saw %d deliveries; the second with headers %v", len(seen), seen[len(seen)-1].Headers)
	}
	held := brokertest.Drain(t, brokertest.Channel(t), long)
	if len(held) != 1 {
		t.Fatalf("the long tier holds %d messages, want 1", len(held))
	}
	if d := held[0]; d.DeliveryMode != amqp.Persistent || d.Headers[retrycore.HeaderOriginalDeliveryMode] != int32(1) || d.Headers[retrycore.HeaderRetryCount] != int32(2) {
		t.Fatalf("delay-tier copy: delivery mode %d, headers %v; want persistent, %s 1, x-retry-count 2", d.DeliveryMode, d.Headers, retrycore.HeaderOriginalDeliveryMode)
	}
}
