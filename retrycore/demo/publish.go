package demo

import (
	"context"
	"errors"
	"fmt"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/retrycore"
)

// publish sends the mix to the main exchange, mandatory and confirmed, as
// a producer would.
func publish(ctx context.Context, ch *amqp.Channel, p retrycore.Pipeline, mix []Message) error {
	if err := ch.Confirm(false); err != nil {
		return fmt.Errorf("demo: confirm mode: %w", broker.Explain(err))
	}
	returns := ch.NotifyReturn(make(chan amqp.Return, len(mix)))
	now := time.Now()
	var pending []*amqp.DeferredConfirmation
	for _, m := range mix {
		dc, err := ch.PublishWithDeferredConfirmWithContext(ctx, p.Main.Exchange, p.Main.RoutingKey,
			true,  // mandatory: the main queue must be bound
			false, // immediate
			amqp.Publishing{
				MessageId:    m.ID,
				ContentType:  m.ContentType,
				DeliveryMode: amqp.Persistent,
				Timestamp:    now,
				AppId:        "parkinglot-demo",
				Body:         m.Body,
			})
		if err != nil {
			return fmt.Errorf("demo: publish %s: %w", m.ID, broker.Explain(err))
		}
		pending = append(pending, dc)
	}
	for i, dc := range pending {
		ok, err := dc.WaitContext(ctx)
		if err != nil {
			return fmt.Errorf("demo: publish %s: %w", mix[i].ID, err)
		}
		if !ok {
			return fmt.Errorf("demo: the broker refused %s (nack)", mix[i].ID)
		}
	}
	select {
	case r := <-returns:
		return fmt.Errorf("demo: %s came back unroutable from %s / %s", r.MessageId, r.Exchange, r.RoutingKey)
	default:
	}
	return nil
}

// Clean deletes every queue and exchange of the demo pipeline named
// o.Name, and says what it removed.
func Clean(ctx context.Context, o Options) error {
	o.defaults()
	p := NewPipeline(o.Name, o.QueueType)
	conn, err := broker.Dial(ctx, o.Broker)
	if err != nil {
		return err
	}
	defer conn.Close()
	queues := []string{p.Main.Queue}
	for _, t := range p.Tiers() {
		queues = append(queues, t.Queue)
	}
	queues = append(queues, p.Error.Queue)
	var errs []error
	// One channel per delete: a failed delete closes its channel.
	for _, q := range queues {
		errs = append(errs, withChannel(conn, func(ch *amqp.Channel) error {
			n, err := ch.QueueDelete(q,
				false, // ifUnused
				false, // ifEmpty
				false) // noWait
			if err == nil {
				o.Progress.Deleted("queue", q, n)
			}
			return err
		}))
	}
	for _, ex := range []string{p.Main.Exchange, p.Retry.Exchange, p.Error.Exchange} {
		errs = append(errs, withChannel(conn, func(ch *amqp.Channel) error {
			err := ch.ExchangeDelete(ex,
				false, // ifUnused
				false) // noWait
			if err == nil {
				o.Progress.Deleted("exchange", ex, -1)
			}
			return err
		}))
	}
	return errors.Join(errs...)
}

func withChannel(conn *broker.Conn, do func(*amqp.Channel) error) error {
	ch, err := conn.Channel()
	if err != nil {
		return fmt.Errorf("demo: open channel: %w", broker.Explain(err))
	}
	defer ch.Close()
	if err := do(ch); err != nil {
		return fmt.Errorf("demo: %w", broker.Explain(err))
	}
	return nil
}
