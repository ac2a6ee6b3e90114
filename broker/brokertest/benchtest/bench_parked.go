package benchtest

import (
	"fmt"
	"testing"
	"time"

	"github.com/parkinglot/parkinglot/broker/brokertest"
	amqp "github.com/rabbitmq/amqp091-go"
)

// BenchBodySize is the body size of the benchmarks' parked messages.
const BenchBodySize = 1024

// ParkedOrigin is where the benchmarks' parked messages came from.
type ParkedOrigin struct{ Exchange, RoutingKey, Queue string }

// Parked is message i as retrycore parks it: 1 KiB persistent JSON body,
// the header contract (origin, last error, retry count, times, kind) and
// the x-death entry its delay queue left. Its id is bench-NNNNNNN.
func Parked(i int, o ParkedOrigin) amqp.Publishing {
	now := time.Now().Truncate(time.Second)
	return amqp.Publishing{
		MessageId:    ParkedID(i),
		ContentType:  "application/json",
		DeliveryMode: amqp.Persistent,
		Timestamp:    now,
		Body:         Body(i, BenchBodySize),
		Headers: amqp.Table{
			"x-original-exchange":    o.Exchange,
			"x-original-routing-key": o.RoutingKey,
			"x-original-queue":       o.Queue,
			"x-retry-count":          int32(3),
			"x-last-error":           ParkedError(i),
			"x-first-failed-at":      now.Add(-time.Minute),
			"x-parked-at":            now,
			"x-failure-kind":         "retries-exhausted",
			"x-death": []any{amqp.Table{
				"count": int64(3), "reason": "expired", "queue": "payment.retry.15s", "time": now,
				"exchange": "retry.exchange", "routing-keys": []any{"payment.retry.15s"},
			}},
			"tenant": "acme",
		},
	}
}

// ParkedID is the message id of Parked(i, …).
func ParkedID(i int) string { return fmt.Sprintf("bench-%07d", i) }

// ParkedError is message i's failure in a realistic parking lot: a few
// kinds, each with ids and numbers that group-by-error folds together.
func ParkedError(i int) string {
	switch i % 5 {
	case 0:
		return fmt.Sprintf("transfer %d not found in ledger shard %d", i, i%7)
	case 1:
		return fmt.Sprintf("POST https://bank.example/api/v2/transfers: 503 Service Unavailable (request %08x)", i*2654435761)
	case 2:
		return fmt.Sprintf("amount %d.%02d exceeds the account's limit", i, i%100)
	case 3:
		return "context deadline exceeded after 30s"
	}
	return fmt.Sprintf("invalid IBAN 'DE%020d'", i)
}

// SeedParked publishes n Parked messages to queue (confirmed).
func SeedParked(tb testing.TB, queue string, n int, o ParkedOrigin) {
	tb.Helper()
	ConfirmedPublish(tb, "", queue, n, BenchWindow, func(i int) amqp.Publishing { return Parked(i, o) })
}

// BenchParkingLot declares a parking lot of the benchmark's queue type
// (BenchQueueArgs), named after the benchmark and suffix, seeds it with n
// Parked messages and waits until all are ready: a benchmark's subject.
func BenchParkingLot(b *testing.B, suffix string, n int) string {
	b.Helper()
	lot := brokertest.Name(b, suffix)
	brokertest.DeclareQueue(b, brokertest.Channel(b), lot, BenchQueueArgs(b, true))
	SeedParked(b, lot, n, ParkedOrigin{})
	brokertest.WaitDepth(b, lot, n, 5*time.Minute)
	return lot
}
