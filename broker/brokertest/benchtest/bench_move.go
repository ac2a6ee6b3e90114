package benchtest

import (
	"context"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// RawPipelinedMove is the raw amqp091-go move, the baseline the replay is
// held to (the package doc): it consumes n messages from src with
// the given prefetch on one connection and publishes each to exchange/key
// unchanged (same properties, headers and body; not mandatory) on a second
// connection with publisher confirms, keeping up to window unconfirmed,
// and acks the originals once their copies are confirmed — with one
// multiple ack per batch of confirms, since amqp091-go hands confirms over
// in publish order and copies are published in delivery order. No
// transform, no audit, no returns to watch. It returns the time from the
// consume until every original is acked and the consuming channel closed
// (a round trip, so the broker has taken the acks), and fails the
// benchmark on a nack or a lost channel.
func RawPipelinedMove(tb testing.TB, src, exchange, key string, n, prefetch, window int) time.Duration {
	tb.Helper()
	cch, pch, confirms := rawPipe(tb, "move", prefetch, window)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()

	start := time.Now()
	deliveries, err := cch.Consume(src, "", false, false, false, false, nil)
	if err != nil {
		tb.Fatalf("consume %s: %v", src, err)
	}
	// pending[i] is the delivery tag of the i-th copy not yet confirmed
	// (copies are confirmed in the order they were published).
	pending := make([]uint64, 0, window)
	published, acked := 0, 0
	for acked < n {
		in := deliveries
		if len(pending) >= window || published >= n {
			in = nil // the window is full (or all sent): wait for confirms
		}
		select {
		case d, ok := <-in:
			if !ok {
				tb.Fatalf("move %s: consumer closed after %d of %d", src, published, n)
			}
			if err := pch.PublishWithContext(ctx, exchange, key, false, false, amqp.Publishing{
				Headers: d.Headers, ContentType: d.ContentType, ContentEncoding: d.ContentEncoding,
				DeliveryMode: d.DeliveryMode, Priority: d.Priority, CorrelationId: d.CorrelationId,
				ReplyTo: d.ReplyTo, Expiration: d.Expiration, MessageId: d.MessageId, Timestamp: d.Timestamp,
				Type: d.Type, UserId: d.UserId, AppId: d.AppId, Body: d.Body,
			}); err != nil {
				tb.Fatalf("publish: %v", err)
			}
			pending = append(pending, d.DeliveryTag)
			published++
		case c, ok := <-confirms:
			if !ok {
				tb.Fatalf("move %s → %s/%s: publish channel closed", src, exchange, key)
			}
			count := 1
			if !c.Ack {
				tb.Fatalf("move %s → %s/%s: copy nacked (tag %d)", src, exchange, key, c.DeliveryTag)
			}
		more:
			for count < len(pending) {
				select {
				case c, ok := <-confirms:
					if !ok || !c.Ack {
						tb.Fatalf("move %s → %s/%s: copy nacked or channel closed", src, exchange, key)
					}
					count++
				default:
					break more
				}
			}
			if err := cch.Ack(pending[count-1], true); err != nil {
				tb.Fatalf("ack: %v", err)
			}
			pending = pending[count:]
			acked += count
		case <-ctx.Done():
			tb.Fatalf("move %s: %d of %d after 20 minutes", src, acked, n)
		}
	}
	if err := cch.Close(); err != nil {
		tb.Fatalf("close the consuming channel: %v", err)
	}
	elapsed := time.Since(start)
	_ = pch.Close()
	return elapsed
}
