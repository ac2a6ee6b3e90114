//go:build integration

package broker_test

import (
	"context"
	"slices"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/broker/brokertest"
)

func TestCCKeys(t *testing.T) {
	h := amqp.Table{
		"CC":  []any{"a.b", []byte("bytes"), int32(1), "c"},
		"BCC": []any{"c", "d"},
		"cc":  []any{"lowercase"}, // the names are case-sensitive
	}
	if got, want := broker.CCKeys(h), []string{"a.b", "c", "d"}; !slices.Equal(got, want) {
		t.Errorf("CCKeys = %q, want %q", got, want)
	}
	if got := broker.CCKeys(amqp.Table{"CC": "not an array"}); got != nil {
		t.Errorf("CCKeys of a string = %q, want none", got)
	}
}

// The route preview counts the queues a message's CC and BCC routing keys
// reach, as the broker routes them: a rascal-forwarded message carries
// CC ["<queue>.<routing key>"], which a "#" or "orders.process.#" binding on
// the same topic exchange picks up.
func TestPreviewRouteCountsCCAndBCC(t *testing.T) {
	ch := brokertest.Channel(t)
	m := brokertest.Management(t)
	ex := brokertest.Name(t, "orders")
	mainQ := brokertest.Name(t, "orders.process")
	ccQ := brokertest.Name(t, "audit")
	bccQ := brokertest.Name(t, "bcc")
	brokertest.DeclareExchange(t, ch, ex, "topic")
	for q, key := range map[string]string{mainQ: "order.created", ccQ: "orders.process.#", bccQ: "secret"} {
		brokertest.DeclareQueue(t, ch, q, nil)
		if err := ch.QueueBind(q, key, ex, false, nil); err != nil {
			t.Fatal(err)
		}
	}
	headers := amqp.Table{"CC": []any{"orders.process.order.created"}, "BCC": []any{"secret"}}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	r, err := m.PreviewRoute(ctx, ex, "order.created", headers)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{mainQ, ccQ, bccQ}
	slices.Sort(want)
	if !slices.Equal(r.Queues, want) || !slices.Equal(r.CCQueues, []string{ccQ, bccQ}) && !slices.Equal(r.CCQueues, []string{bccQ, ccQ}) {
		t.Errorf("route %+v: want queues %q, %s and %s through CC/BCC", r, want, ccQ, bccQ)
	}
	if !slices.Equal(r.CC, []string{"orders.process.order.created", "secret"}) {
		t.Errorf("CC keys %q", r.CC)
	}
	// The broker agrees.
	brokertest.Publish(t, ch, ex, "order.created", amqp.Publishing{Headers: headers, Body: []byte("x")})
	for _, q := range []string{mainQ, ccQ, bccQ} {
		brokertest.WaitDepth(t, q, 1, 15*time.Second)
	}
	// Without the headers only the main queue.
	r, err = m.PreviewRoute(ctx, ex, "order.created", nil)
	if err != nil || !slices.Equal(r.Queues, []string{mainQ}) || len(r.CCQueues) != 0 {
		t.Errorf("route without CC %+v, %v", r, err)
	}
	// Through the default exchange, a CC key names a queue.
	r, err = m.PreviewRoute(ctx, "", mainQ, amqp.Table{"CC": []any{ccQ}})
	if err != nil || !slices.Equal(r.CCQueues, []string{ccQ}) {
		t.Errorf("default exchange route with CC %+v, %v", r, err)
	}
}
