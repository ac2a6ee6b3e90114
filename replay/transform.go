package replay

import (
	"crypto/rand"
	"encoding/hex"
	"maps"
	"math"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/retrycore"
)

// Transform returns the copy a replay publishes: a
// fresh retry budget in every convention parkinglot reads
// (retrycore.ResetBudget: x-death, x-first-death-*, x-last-death-*,
// x-retry-count and x-delivery-count removed, rascal's recovery counters and
// Celery's retries reset), user_id and expiration dropped (a foreign
// user_id is refused with 406, a kept expiration may expire the copy on its
// way), x-replay-count + 1, x-replayed-at and x-replay-id set, the
// producer's delivery mode given back where the daemon recorded it
// (retrycore.RestoreDeliveryMode, which removes x-original-delivery-mode);
// message_id, the body and every other property and header kept (CC and
// BCC too: the route preview counts the queues they reach). It returns the
// counters it reset, in words, for the report. m is not changed.
func Transform(m broker.Message, replayID string, now time.Time) (amqp.Publishing, []string) {
	h := make(amqp.Table, len(m.Headers)+3)
	for k, v := range m.Headers {
		h[k] = v // ResetBudget replaces nested tables it edits, so a shallow copy is enough
	}
	m.Headers = h
	return transformOwned(m, replayID, now)
}

// transformOwned is Transform changing m's headers in place, for a caller
// that owns them and reads them no more (a replay's held delivery, see
// broker.Held.OwnsHeaders): no copy of the table a message.
func transformOwned(m broker.Message, replayID string, now time.Time) (amqp.Publishing, []string) {
	h := m.Headers
	if h == nil {
		h = amqp.Table{}
	}
	var count int64
	if n, ok := broker.IntValue(h[retrycore.HeaderReplayCount]); ok && n > 0 {
		count = n
	}
	reset := retrycore.ResetBudget(h)
	h[retrycore.HeaderReplayCount] = int32(min(count+1, math.MaxInt32))
	h[retrycore.HeaderReplayedAt] = now.Truncate(time.Second) // AMQP timestamps are seconds
	h[retrycore.HeaderReplayID] = replayID
	pub := m.Publishing()
	pub.Headers = h
	pub.DeliveryMode = retrycore.RestoreDeliveryMode(h, pub.DeliveryMode)
	pub.UserId = ""
	pub.Expiration = ""
	return pub, reset
}

// sendAlone strips from a copy sent to the queue it failed in alone
// (TargetQueue) what would route it anywhere else: the CC and BCC headers,
// which the broker routes through the same (default) exchange, so a queue
// they name would get it too. It returns
// what it removed, in words, for the report.
func sendAlone(h amqp.Table) []string {
	var removed []string
	for _, k := range []string{"CC", "BCC"} {
		if _, ok := h[k]; ok {
			delete(h, k)
			removed = append(removed, k+" (sent to the failed queue alone)")
		}
	}
	return removed
}

// Resets is what a replay resets in a message's headers (Transform's
// report), without building the copy: for the plan.
func Resets(h amqp.Table) []string {
	return retrycore.ResetBudget(maps.Clone(h))
}

// NewReplayID returns a random UUID (version 4) from crypto/rand: unique
// per message and run, so duplicates downstream can be recognised.
func NewReplayID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	var out [36]byte
	hex.Encode(out[0:8], b[0:4])
	out[8] = '-'
	hex.Encode(out[9:13], b[4:6])
	out[13] = '-'
	hex.Encode(out[14:18], b[6:8])
	out[18] = '-'
	hex.Encode(out[19:23], b[8:10])
	out[23] = '-'
	hex.Encode(out[24:], b[10:])
	return string(out[:])
}
