//go:build integration

package broker_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/broker/brokertest"
)

// The broker behaviours that differ between the RabbitMQ versions users run
// and that decide whether a message is lost (the README's version table
// reports what these assert).
// Each test asserts what the version under test does; make test runs them
// against 3.10, 4.0 and 4.3. None skips a version.

// giveBack gets the queue's head and gives it back: by basic.nack(requeue)
// or basic.reject(requeue). It returns the delivery's headers, or ok=false
// when the queue was empty.
func giveBack(t *testing.T, ch *amqp.Channel, q string, reject bool) (amqp.Table, bool) {
	t.Helper()
	d, ok := brokertest.GetWithin(t, ch, q, time.Second)
	if !ok {
		return nil, false
	}
	var err error
	if reject {
		err = d.Reject(true)
	} else {
		err = d.Nack(false, true)
	}
	if err != nil {
		t.Fatal(err)
	}
	return d.Headers, true
}

// givesBeforeGone gives the only message of q back until the queue drops
// it, at most max times, and says how many give-backs it took (max+1: it
// was never dropped).
func givesBeforeGone(t *testing.T, ch *amqp.Channel, q string, reject bool, max int) int {
	t.Helper()
	for i := 0; i < max; i++ {
		if _, ok := giveBack(t, ch, q, reject); !ok {
			return i
		}
	}
	if _, ok := brokertest.GetWithin(t, ch, q, time.Second); !ok {
		return max
	}
	return max + 1
}

func TestVersionQuorumDeliveryLimitCounting(t *testing.T) {
	v := brokertest.Version(t)
	for _, tc := range []struct {
		name   string
		reject bool
		counts bool
	}{
		{"nack", false, v.NackCountsTowardDeliveryLimit()},
		{"reject", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ch := brokertest.Channel(t)
			q := brokertest.Name(t, "q")
			brokertest.DeclareQueue(t, ch, q, amqp.Table{"x-queue-type": "quorum", "x-delivery-limit": int32(2)})
			brokertest.Publish(t, ch, "", q, amqp.Publishing{Body: []byte("x")})
			n := givesBeforeGone(t, ch, q, tc.reject, 6)
			switch {
			case tc.counts && n != 3:
				t.Errorf("RabbitMQ %s: limit 2, the message went after %d give-backs by %s; want the 3rd to drop it", v, n, tc.name)
			case !tc.counts && n != 7:
				t.Errorf("RabbitMQ %s: a %s give-back should not count toward the limit; the message went after %d", v, tc.name, n)
			}
		})
	}
}

func TestVersionQuorumDefaultDeliveryLimit(t *testing.T) {
	v := brokertest.Version(t)
	ch := brokertest.Channel(t)
	q := brokertest.Name(t, "q")
	brokertest.DeclareQueue(t, ch, q, amqp.Table{"x-queue-type": "quorum"})
	brokertest.Publish(t, ch, "", q, amqp.Publishing{Body: []byte("x")})
	n := givesBeforeGone(t, ch, q, true, 25)
	if v.AtLeast(4, 0, 0) && n != 21 {
		t.Errorf("RabbitMQ %s: an unset delivery limit is 20; the message went after %d rejects, want 21", v, n)
	}
	if !v.AtLeast(4, 0, 0) && n != 26 {
		t.Errorf("RabbitMQ %s: an unset delivery limit is none; the message went after %d rejects", v, n)
	}
}

func TestVersionDeliveryCountHeaders(t *testing.T) {
	v := brokertest.Version(t)
	ch := brokertest.Channel(t)
	q := brokertest.Name(t, "q")
	brokertest.DeclareQueue(t, ch, q, amqp.Table{"x-queue-type": "quorum", "x-delivery-limit": int32(10)})
	brokertest.Publish(t, ch, "", q, amqp.Publishing{Body: []byte("x")})
	giveBack(t, ch, q, false) // a nack
	giveBack(t, ch, q, true)  // a reject
	h, _ := giveBack(t, ch, q, false)
	count, _ := broker.IntValue(h["x-delivery-count"])
	acquired, hasAcquired := broker.IntValue(h["x-acquired-count"])
	if v.AtLeast(4, 3, 0) {
		// 4.3 counts failed deliveries (the reject) and every hand-out.
		if count != 1 || !hasAcquired || acquired != 2 {
			t.Errorf("RabbitMQ %s: after a nack and a reject: x-delivery-count %v, x-acquired-count %v; want 1 and 2", v, h["x-delivery-count"], h["x-acquired-count"])
		}
		return
	}
	if count != 2 || hasAcquired {
		t.Errorf("RabbitMQ %s: after a nack and a reject: x-delivery-count %v, x-acquired-count %v; want 2 and none", v, h["x-delivery-count"], h["x-acquired-count"])
	}
}

// Where a given-back message goes in a quorum queue (measured; a reject):
// ahead of the other ready messages when the queue has a delivery limit
// (3.10: one set by an argument; 4.0: any, the default 20 included; 4.3:
// always, even with -1), else to the back.
func TestVersionQuorumGiveBackOrder(t *testing.T) {
	v := brokertest.Version(t)
	v4, v43 := v.AtLeast(4, 0, 0), v.AtLeast(4, 3, 0)
	for _, tc := range []struct {
		name  string
		args  amqp.Table
		ahead bool // the given-back message is the next one out
	}{
		{"limit unset", amqp.Table{}, v4},
		{"limit 5", amqp.Table{"x-delivery-limit": int32(5)}, true},
		{"limit -1", amqp.Table{"x-delivery-limit": int32(-1)}, v43},
	} {
		if tc.name == "limit -1" && !v4 {
			continue // before 4.0 -1 drops on the first give-back: TestVersionDeliveryLimitMinusOne
		}
		t.Run(tc.name, func(t *testing.T) {
			ch := brokertest.Channel(t)
			q := brokertest.Name(t, "q")
			tc.args["x-queue-type"] = "quorum"
			brokertest.DeclareQueue(t, ch, q, tc.args)
			for _, id := range []string{"a", "b"} {
				brokertest.Publish(t, ch, "", q, amqp.Publishing{MessageId: id})
			}
			giveBack(t, ch, q, true)
			d, ok := brokertest.GetWithin(t, ch, q, time.Second)
			if !ok {
				t.Fatal("queue empty")
			}
			if got, want := d.MessageId, map[bool]string{true: "a", false: "b"}[tc.ahead]; got != want {
				t.Errorf("RabbitMQ %s, %s: after giving back a, the head is %s; want %s", v, tc.name, got, want)
			}
		})
	}
}

// x-delivery-limit -1: taken literally before 4.0 (the first give-back
// drops the message), unlimited from 4.0.
func TestVersionDeliveryLimitMinusOne(t *testing.T) {
	v := brokertest.Version(t)
	ch := brokertest.Channel(t)
	q := brokertest.Name(t, "q")
	brokertest.DeclareQueue(t, ch, q, amqp.Table{"x-queue-type": "quorum", "x-delivery-limit": int32(-1)})
	brokertest.Publish(t, ch, "", q, amqp.Publishing{Body: []byte("x")})
	n := givesBeforeGone(t, ch, q, true, 25)
	if v.AtLeast(4, 0, 0) && n != 26 {
		t.Errorf("RabbitMQ %s: -1 is unlimited; the message went after %d rejects", v, n)
	}
	if !v.AtLeast(4, 0, 0) && n != 1 {
		t.Errorf("RabbitMQ %s: -1 is taken literally; the message went after %d rejects, want 1", v, n)
	}
}

// A policy's delivery-limit -1 is refused before 4.0 (HTTP 400).
func TestVersionPolicyDeliveryLimitMinusOne(t *testing.T) {
	v := brokertest.Version(t)
	name := brokertest.Name(t, "policy")
	pattern := "^" + strings.ReplaceAll(name, ".", `\.`) + "$" // matches nothing else
	err := brokertest.PutPolicy(t, name, pattern, map[string]any{"delivery-limit": -1})
	var se *brokertest.StatusError
	switch {
	case v.AtLeast(4, 0, 0) && err != nil:
		t.Errorf("RabbitMQ %s: a policy with delivery-limit -1 should be accepted: %v", v, err)
	case !v.AtLeast(4, 0, 0) && (!errors.As(err, &se) || se.Code != http.StatusBadRequest):
		t.Errorf("RabbitMQ %s: a policy with delivery-limit -1 should be refused with 400: %v", v, err)
	}
}

// x-last-death-* come with 3.13; the broker's own x-death is what a client
// sees, and a client-set x-death is merged before 4.0 and ignored from 4.0.
func TestVersionDeathHeaders(t *testing.T) {
	v := brokertest.Version(t)
	ch := brokertest.Channel(t)
	main := brokertest.Name(t, "main")
	dead := brokertest.Name(t, "dead")
	brokertest.DeclareQueue(t, ch, dead, nil)
	brokertest.DeclareQueue(t, ch, main, amqp.Table{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": dead})
	clientDeath := amqp.Table{
		"queue": main, "reason": "rejected", "count": int64(5),
		"exchange": "", "routing-keys": []any{main}, "time": time.Now().Truncate(time.Second),
	}
	brokertest.Publish(t, ch, "", main, amqp.Publishing{Body: []byte("x"), Headers: amqp.Table{"x-death": []any{clientDeath}}})
	d, ok := brokertest.GetWithin(t, ch, main, time.Second)
	if !ok {
		t.Fatal("main queue empty")
	}
	if err := d.Reject(false); err != nil {
		t.Fatal(err)
	}
	got, ok := brokertest.GetWithin(t, ch, dead, time.Second)
	if !ok {
		t.Fatal("nothing dead-lettered")
	}
	_, hasLast := got.Headers["x-last-death-queue"]
	if hasLast != v.AtLeast(3, 13, 0) {
		t.Errorf("RabbitMQ %s: x-last-death-queue present=%v", v, hasLast)
	}
	deaths, _ := got.Headers["x-death"].([]any)
	var count int64
	for _, e := range deaths {
		if tab, ok := e.(amqp.Table); ok && tab["queue"] == main && tab["reason"] == "rejected" {
			count, _ = broker.IntValue(tab["count"])
		}
	}
	want := int64(1)
	if !v.AtLeast(4, 0, 0) {
		want = 6 // the client's 5 and the broker's one
	}
	if count != want {
		t.Errorf("RabbitMQ %s: x-death rejected count %d after a client-set 5 and one rejection; want %d (%v)", v, count, want, deaths)
	}
}

// The management API: delivery_limit appears for quorum queues from 4.0
// (an integer, or "unlimited"); effective_policy_definition is an object,
// an empty array or an empty string, depending on the version.
func TestVersionManagementQueueFields(t *testing.T) {
	t.Parallel() // waits for the statistics
	v := brokertest.Version(t)
	ch := brokertest.Channel(t)
	mgmt := brokertest.Management(t)
	limited := brokertest.Name(t, "limited")
	unlimited := brokertest.Name(t, "unlimited")
	brokertest.DeclareQueue(t, ch, limited, amqp.Table{"x-queue-type": "quorum"})
	brokertest.DeclareQueue(t, ch, unlimited, amqp.Table{"x-queue-type": "quorum", "x-delivery-limit": int32(-1)})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, tc := range []struct {
		q    string
		want any // what delivery_limit says from 4.0 (nil: absent)
	}{{limited, float64(20)}, {unlimited, "unlimited"}} {
		// The fields come with the queue's statistics, emitted every few
		// seconds and not all at once: wait for the one in question (before
		// 4.0, for messages, which comes with the rest).
		field := "messages"
		if v.AtLeast(4, 0, 0) {
			field = "delivery_limit"
		}
		var raw map[string]any
		for {
			var err error
			if raw, err = brokertest.RawQueue(ctx, t, tc.q); err != nil {
				t.Fatal(err)
			}
			if _, ok := raw[field]; ok {
				break
			}
			select {
			case <-ctx.Done():
				t.Fatalf("RabbitMQ %s: no %s for %s: %v", v, field, tc.q, raw)
			case <-time.After(200 * time.Millisecond): // polling the statistics with a deadline
			}
		}
		got, present := raw["delivery_limit"]
		switch {
		case v.AtLeast(4, 0, 0) && got != tc.want:
			t.Errorf("RabbitMQ %s: %s delivery_limit %v (present %v); want %v", v, tc.q, got, present, tc.want)
		case !v.AtLeast(4, 0, 0) && present:
			t.Errorf("RabbitMQ %s: %s has delivery_limit %v; before 4.0 there is none", v, tc.q, got)
		}
		if epd, ok := raw["effective_policy_definition"]; ok {
			switch epd := epd.(type) {
			case map[string]any, []any, string:
			default:
				t.Errorf("RabbitMQ %s: effective_policy_definition is %T", v, epd)
			}
		}
		// Whatever the shape, parkinglot reads it.
		if _, err := mgmt.Queue(ctx, tc.q); err != nil {
			t.Errorf("RabbitMQ %s: read %s: %v", v, tc.q, err)
		}
	}
}

// A non-durable, non-exclusive queue is a deprecated feature from 4.0;
// measured on Debian's 4.3.6 it is still declared (permitted by default),
// so parkinglot's tests and topology keep every queue durable regardless.
func TestVersionTransientQueue(t *testing.T) {
	v := brokertest.Version(t)
	ch := brokertest.Channel(t)
	q := brokertest.Name(t, "transient")
	if _, err := ch.QueueDeclare(q, false /* durable */, false /* autoDelete */, false /* exclusive */, false, nil); err != nil {
		t.Errorf("RabbitMQ %s: a transient non-exclusive queue should be declared: %v", v, err)
	}
	if _, err := ch.QueueDelete(q, false, false, false); err != nil {
		t.Fatal(err)
	}
}

// The consumer timeout per queue (x-consumer-timeout, 3.12+): on 4.3 a
// quorum consumer past it is cancelled with basic.cancel within a second
// and its channel stays open; on 4.0 the channel is closed, on the broker's
// minute tick; before 3.12 the argument does nothing.
func TestVersionConsumerTimeout(t *testing.T) {
	t.Parallel() // up to 75 s of waiting on versions that act late or never
	v := brokertest.Version(t)
	conn := brokertest.Dial(t, "")
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	q := brokertest.Name(t, "q")
	brokertest.DeclareQueue(t, brokertest.Channel(t), q, amqp.Table{"x-queue-type": "quorum", "x-consumer-timeout": int32(1000)})
	brokertest.Publish(t, brokertest.Channel(t), "", q, amqp.Publishing{Body: []byte("x")})
	cancels := ch.NotifyCancel(make(chan string, 1))
	closes := ch.NotifyClose(make(chan *amqp.Error, 1))
	if _, err := ch.Consume(q, "held", false, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	// The broker checks consumer timeouts on its channel tick; wait past it.
	select {
	case tag := <-cancels:
		if !v.AtLeast(4, 3, 0) {
			t.Errorf("RabbitMQ %s: consumer %s cancelled; before 4.3 a timeout closes the channel", v, tag)
		}
	case e := <-closes:
		if v.AtLeast(4, 3, 0) || !v.AtLeast(3, 12, 0) {
			t.Errorf("RabbitMQ %s: channel closed (%v)", v, e)
		}
	case <-time.After(75 * time.Second):
		if v.AtLeast(3, 12, 0) {
			t.Errorf("RabbitMQ %s: a consumer past x-consumer-timeout was neither cancelled nor closed", v)
		}
	}
}

// A poison message parked by the delivery limit at the broker's defaults
// (brokertest.ParkByDeliveryLimit): 4.3 carries its x-delivery-count (21,
// one past the default 20) into the parking lot, whose own default limit
// then leaves it one lost connection from being dropped; 4.0 resets the
// count when it dead-letters; 3.x has no default limit (the message is
// parked by a reject, with no count).
func TestVersionDeliveryCountCarriedIntoTheParkingLot(t *testing.T) {
	v := brokertest.Version(t)
	lot := brokertest.Name(t, "lot")
	brokertest.ParkByDeliveryLimit(t, lot, 1)
	h, ok := giveBack(t, brokertest.Channel(t), lot, false)
	if !ok {
		t.Fatal("the parking lot is empty")
	}
	count, has := broker.IntValue(h["x-delivery-count"])
	switch {
	case v.AtLeast(4, 3, 0):
		if !has || count != 21 {
			t.Errorf("RabbitMQ %s: the parked message carries x-delivery-count %v; want 21", v, h["x-delivery-count"])
		}
	case has && count != 0:
		t.Errorf("RabbitMQ %s: the parked message carries x-delivery-count %v; want none", v, h["x-delivery-count"])
	}
}
