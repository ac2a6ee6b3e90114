package retrycore

import (
	"math"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker"
)

// Failure is what the daemon knows about a failed delivery when it writes
// the retry or park copy's headers.
type Failure struct {
	Exchange   string // the delivery's exchange and routing key: the origin
	RoutingKey string
	Queue      string // the main queue it failed in
	Err        string // x-last-error, already one line
	// DeliveryMode is the delivery's: recorded in x-original-delivery-mode
	// when the copy's (CopyDeliveryMode) differs.
	DeliveryMode uint8
}

// CopyDeliveryMode is the delivery mode of every retry and park copy,
// whatever the producer sent: a transient message in a classic delay queue
// or parking lot is gone at the broker's next restart, and a failed
// message is one somebody still has to act on.
const CopyDeliveryMode = amqp.Persistent

// RetryHeaders returns the headers of the copy sent to the delay tier for
// retry n (1-based): the original headers, x-retry-count = n, the error,
// and the origin and first failure time unless already recorded.
func RetryHeaders(in amqp.Table, f Failure, n int64, now time.Time) amqp.Table {
	h := copyHeaders(in, f, now)
	h[HeaderRetryCount] = clampInt32(n)
	return h
}

// ParkHeaders returns the headers of the copy sent to the parking lot after
// retries retries: as RetryHeaders, plus x-failure-kind and x-parked-at, with
// x-retry-count = retries done.
func ParkHeaders(in amqp.Table, f Failure, retries int64, kind string, now time.Time) amqp.Table {
	h := copyHeaders(in, f, now)
	h[HeaderRetryCount] = clampInt32(retries)
	h[HeaderFailureKind] = kind
	h[HeaderParkedAt] = now
	return h
}

func copyHeaders(in amqp.Table, f Failure, now time.Time) amqp.Table {
	h := broker.CloneTable(in)
	if h == nil {
		h = amqp.Table{}
	}
	// Set by the broker for one queue's delivery: stale in the next queue.
	broker.DropDeliveryHeaders(h)
	h[HeaderLastError] = OneLine(f.Err)
	setIfAbsent(h, HeaderOriginalExchange, f.Exchange)
	setIfAbsent(h, HeaderOriginalRoutingKey, f.RoutingKey)
	if f.Queue != "" {
		setIfAbsent(h, HeaderOriginalQueue, f.Queue)
	}
	if _, ok := asTime(h[HeaderFirstFailedAt]); !ok {
		h[HeaderFirstFailedAt] = now
	}
	// A persistent delivery is the producer's own mode or one back from a
	// delay tier, whose header (if any) already holds the producer's.
	if f.DeliveryMode != CopyDeliveryMode {
		h[HeaderOriginalDeliveryMode] = int32(f.DeliveryMode)
	}
	return h
}

// RestoreDeliveryMode returns the delivery mode a replayed copy is sent
// with, so that its consumer gets what the producer sent: the one
// x-original-delivery-mode holds, else mode (the parked message's, as a
// message parked without the header keeps its own). It removes the header
// from h, the copy's own table: the copy's mode is the producer's again.
func RestoreDeliveryMode(h amqp.Table, mode uint8) uint8 {
	v, ok := h[HeaderOriginalDeliveryMode]
	if !ok {
		return mode
	}
	delete(h, HeaderOriginalDeliveryMode)
	if n, ok := asInt(v); ok && n >= 0 && n <= math.MaxUint8 {
		return uint8(n)
	}
	return mode
}

// setIfAbsent keeps an origin recorded by an earlier failure (or by a
// framework that uses the same header), since the delivery's exchange is
// the dead-letter exchange on later attempts. An empty one is recorded
// too: "" is the default exchange a producer published to.
func setIfAbsent(h amqp.Table, key, value string) {
	if _, ok := asString(h[key]); ok {
		return
	}
	h[key] = value
}

// clampInt32 writes counts as int32, the contract's type.
func clampInt32(n int64) int32 {
	switch {
	case n > math.MaxInt32:
		return math.MaxInt32
	case n < 0:
		return 0
	}
	return int32(n)
}
