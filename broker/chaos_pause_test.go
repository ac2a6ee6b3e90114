//go:build chaos

package broker_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/broker/brokertest"
)

// queuePause is longer than a pass's 15-s stall rule.
const queuePause = 20 * time.Second

// TestChaosClassicQueuePauseMidPass suspends a classic queue's process for
// 20 s in the middle of a pass (the rest of the broker goes on), as
// RabbitMQ 3.10.8 paused a million-message queue (README, "RabbitMQ
// versions"): the pass waits it out — here in the change of segment, whose
// cancel the suspended queue answers late — and sees every message, in
// order, takes nothing and gives everything back. Which wait a pause lands
// in depends on timing; the rule for the wait for a delivery itself is
// TestStallLimit.
func TestChaosClassicQueuePauseMidPass(t *testing.T) {
	const n = 3000
	conn := brokertest.Dial(t, "")
	ch := brokertest.Channel(t)
	mgmt := brokertest.Management(t)
	q := brokertest.Name(t, "q")
	brokertest.DeclareQueue(t, ch, q, nil)
	msgs := make([]amqp.Publishing, n)
	for i := range msgs {
		msgs[i] = amqp.Publishing{MessageId: fmt.Sprintf("m-%05d", i), Body: []byte("x"), DeliveryMode: amqp.Persistent}
	}
	brokertest.PublishMany(t, ch, "", q, msgs)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	p, err := broker.OpenPass(ctx, conn, broker.PassOptions{Queue: q, Management: mgmt})
	if err != nil {
		t.Fatal(err)
	}
	if p.Facts().Type != "classic" {
		t.Fatalf("queue type %q: the management API should say classic", p.Facts().Type)
	}
	seen, outOfOrder := 0, 0
	var passErr error
	var longest time.Duration
	for {
		if seen == 100 {
			brokertest.SuspendQueue(t, q, queuePause)
		}
		start := time.Now()
		h, err := p.Next(ctx)
		longest = max(longest, time.Since(start))
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			passErr = err
			break
		}
		if h.ID() != fmt.Sprintf("m-%05d", seen) {
			outOfOrder++
		}
		seen++
	}
	rep, cerr := p.Close(ctx)
	if cerr != nil {
		t.Fatalf("close after %d seen (pass: %v): %v", seen, passErr, cerr)
	}
	brokertest.Figures(t, "classic pass, queue suspended %v after 100 of %d: seen=%d out_of_order=%d longest_wait=%v err=%v taken=%d given_back=%d",
		queuePause, n, seen, outOfOrder, longest.Round(time.Millisecond), passErr, rep.Taken, rep.GivenBack)
	if passErr != nil || seen != n {
		t.Errorf("the pass saw %d of %d and ended with %v: it should wait the pause out", seen, n, passErr)
	}
	if longest < 15*time.Second {
		t.Errorf("the longest wait for a delivery was %v: the suspension did not outlast the 15-s stall rule, the test tested nothing", longest)
	}
	if outOfOrder != 0 || rep.Taken != 0 || rep.GivenBack != n {
		t.Errorf("out of order %d, taken %d, given back %d of %d", outOfOrder, rep.Taken, rep.GivenBack, n)
	}
	brokertest.WaitDepth(t, q, n, time.Minute)
}
