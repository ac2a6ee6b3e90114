//go:build integration

package broker_test

import (
	"context"
	"errors"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/broker/brokertest"
)

// TestBrokerRefusesTheExpirationsPublishableRefuses: the broker under test
// closes the channel (406) for each expiration Publishable refuses, and
// takes the ones it lets through, up to ten years in milliseconds.
func TestBrokerRefusesTheExpirationsPublishableRefuses(t *testing.T) {
	q := brokertest.Name(t, "expiration")
	brokertest.DeclareQueue(t, brokertest.Channel(t), q, nil)
	for _, tc := range []struct {
		expiration string
		ok         bool
	}{
		{"0", true}, {"60000", true}, {"4294967296", true}, {"315360000000", true},
		{"315360000001", false}, {"99999999999999999999", false}, {"-5", false}, {"1.5", false},
	} {
		m := broker.Message{Properties: broker.Properties{Expiration: tc.expiration}}
		if got := broker.Publishable(m) == nil; got != tc.ok {
			t.Errorf("Publishable(expiration %q) ok = %v, want %v", tc.expiration, got, tc.ok)
		}
		ch := brokertest.Channel(t)
		if err := ch.Confirm(false); err != nil {
			t.Fatal(err)
		}
		closed := ch.NotifyClose(make(chan *amqp.Error, 1))
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		dc, err := ch.PublishWithDeferredConfirmWithContext(ctx, "", q, true, false,
			amqp.Publishing{Expiration: tc.expiration, Body: []byte("x")})
		var acked bool
		if err == nil {
			acked, err = dc.WaitContext(ctx)
		}
		cancel()
		// A refused publish is nacked (or its wait ends) as the broker
		// closes the channel: the close says why.
		var amqpErr *amqp.Error
		if (err != nil || !acked) && !errors.As(err, &amqpErr) {
			select {
			case amqpErr = <-closed:
			case <-time.After(5 * time.Second):
			}
		}
		switch {
		case tc.ok && (err != nil || !acked):
			t.Errorf("expiration %q: the broker refused it (%v, acked %v)", tc.expiration, err, acked)
		case !tc.ok && (amqpErr == nil || amqpErr.Code != amqp.PreconditionFailed):
			t.Errorf("expiration %q: want the channel closed with 406, got %v (acked %v)", tc.expiration, err, acked)
		}
	}
	brokertest.Purge(t, brokertest.Channel(t), q)
}
