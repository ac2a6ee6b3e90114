package replay

import (
	"context"
	"fmt"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker"
)

// PublishOptions are a new message for `parkinglot publish`: sent as a
// producer that loses nothing sends it (persistent, mandatory, confirmed).
type PublishOptions struct {
	Exchange   string // "" is the default exchange (RoutingKey names the queue)
	RoutingKey string
	Body       []byte
	// ContentType, MessageID and Headers are the message's properties;
	// each of Count copies gets MessageID, or MessageID-N (from 1) when
	// Count > 1, or none when MessageID is empty.
	ContentType string
	MessageID   string
	Headers     amqp.Table
	Count       int // at least 1
}

// PublishResult is what the broker confirmed.
type PublishResult struct {
	Published int      `json:"published"`
	IDs       []string `json:"ids,omitempty"`
}

// Publish sends o.Count copies of a message, waits for the broker's
// confirms, and fails with ErrUnroutable (a copy came back: no queue is
// bound for that exchange and key) or broker.ErrNacked. A copy returned
// is in no queue; those confirmed before it are.
func (s *Session) Publish(ctx context.Context, o PublishOptions) (PublishResult, error) {
	if o.Count < 1 {
		o.Count = 1
	}
	conn, err := s.publisherConn(ctx)
	if err != nil {
		return PublishResult{}, err
	}
	ch, err := conn.Channel()
	if err != nil {
		return PublishResult{}, fmt.Errorf("open channel: %w", broker.Explain(err))
	}
	defer conn.CloseChannel(ch)
	if err := ch.Confirm(false); err != nil {
		return PublishResult{}, fmt.Errorf("confirm mode: %w", broker.Explain(err))
	}
	returns := ch.NotifyReturn(make(chan amqp.Return, o.Count))
	now := time.Now()
	var res PublishResult
	for i := range o.Count {
		id := o.MessageID
		if id != "" && o.Count > 1 {
			id = fmt.Sprintf("%s-%d", o.MessageID, i+1)
		}
		dc, err := ch.PublishWithDeferredConfirmWithContext(ctx, o.Exchange, o.RoutingKey,
			true,  // mandatory: a message no queue takes must come back, not vanish
			false, // immediate
			amqp.Publishing{
				MessageId:    id,
				ContentType:  o.ContentType,
				Headers:      o.Headers,
				DeliveryMode: amqp.Persistent,
				Timestamp:    now,
				AppId:        "parkinglot",
				Body:         o.Body,
			})
		if err != nil {
			return res, fmt.Errorf("publish: %w", broker.Explain(err))
		}
		ok, err := dc.WaitContext(ctx)
		switch {
		case err != nil:
			return res, fmt.Errorf("publish: %w", err)
		case !ok:
			return res, fmt.Errorf("publish: %w", broker.ErrNacked)
		}
		// The broker sends a mandatory message's return before its
		// confirm: one came back if it is here now.
		select {
		case r := <-returns:
			return res, fmt.Errorf("publish to exchange %q with routing key %q: %w (%s)", r.Exchange, r.RoutingKey, ErrUnroutable, r.ReplyText)
		default:
		}
		res.Published++
		if id != "" {
			res.IDs = append(res.IDs, id)
		}
	}
	if err := ctx.Err(); err != nil {
		return res, err
	}
	return res, nil
}
