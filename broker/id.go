package broker

import (
	"crypto/sha256"
	"encoding/hex"

	amqp "github.com/rabbitmq/amqp091-go"
)

// IsDeliveryHeader reports whether k is one a quorum queue adds to each
// delivery: x-delivery-count, and from RabbitMQ 4.3 x-acquired-count (every
// hand-out, a browse's included). They change while a message sits in a
// queue, so the content id leaves them out, and a copy published elsewhere
// drops them: they describe one queue's deliveries, not the message.
func IsDeliveryHeader(k string) bool {
	return k == "x-delivery-count" || k == "x-acquired-count"
}

// transitHeaders are the headers a message gains on its way from its first
// handling to its replay: what retrycore writes when it retries or parks
// (x-retry-count, x-last-error, x-original-*, x-first-failed-at,
// x-parked-at, x-failure-kind), what replay writes (x-replay-id,
// x-replay-count, x-replayed-at, x-replayed-error, x-replay-run), and what the broker
// writes when it dead-letters (x-death, x-first-death-*, x-last-death-*).
// Leaving them out keeps one id from the daemon's first handling to a
// replay.
var transitHeaders = map[string]bool{
	"x-retry-count":            true,
	"x-last-error":             true,
	"x-original-exchange":      true,
	"x-original-routing-key":   true,
	"x-original-queue":         true,
	"x-original-delivery-mode": true,
	"x-first-failed-at":        true,
	"x-parked-at":              true,
	"x-failure-kind":           true,
	"x-replay-count":           true,
	"x-replayed-at":            true,
	"x-replay-id":              true,
	"x-replayed-error":         true,
	"x-replay-run":             true,
	"x-death":                  true,
	"x-first-death-queue":      true,
	"x-first-death-reason":     true,
	"x-first-death-exchange":   true,
	"x-last-death-queue":       true,
	"x-last-death-reason":      true,
	"x-last-death-exchange":    true,
}

// IsTransitHeader reports whether k is a header the content id leaves out
// because it changes on the way while the message stays the same: a
// delivery header, or one the retry, park, dead-letter or replay path adds.
func IsTransitHeader(k string) bool { return transitHeaders[k] || IsDeliveryHeader(k) }

// DropDeliveryHeaders removes the delivery headers from h (a copy's).
func DropDeliveryHeaders(h amqp.Table) {
	delete(h, "x-delivery-count")
	delete(h, "x-acquired-count")
}

// ID is the message's message_id; else, for a Celery task (task protocol
// 2: a "task" header), its task id, the "id" header or else the
// correlation_id (Celery sets no message_id); else a stable content id:
// "sha256:" and the first 12 hex digits of a hash over the body and the
// headers the message had when it was first handled (ContentID).
func (m Message) ID() string {
	if m.Properties.MessageID != "" {
		return m.Properties.MessageID
	}
	if id := celeryTaskID(m); id != "" {
		return id
	}
	return ContentID(m.Body, m.Headers)
}

// celeryTaskID is the task id of a Celery task message, or "".
func celeryTaskID(m Message) string {
	if task, ok := StringValue(m.Headers["task"]); !ok || task == "" {
		return ""
	}
	if id, ok := StringValue(m.Headers["id"]); ok && id != "" {
		return id
	}
	return m.Properties.CorrelationID
}

// ContentID hashes the body and the typed form of the headers (keys
// sorted), leaving out the transit headers (IsTransitHeader): one message
// has one id from its first handling by the daemon, through its retries and
// its parking, to its replay.
func ContentID(body []byte, headers amqp.Table) string {
	stable := headers
	for k := range headers {
		if IsTransitHeader(k) {
			stable = make(amqp.Table, len(headers))
			for k2, v := range headers {
				if !IsTransitHeader(k2) {
					stable[k2] = v
				}
			}
			break
		}
	}
	h := sha256.New()
	h.Write(body)
	h.Write([]byte{0})
	if enc, err := EncodeTable(stable); err == nil {
		h.Write(enc)
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))[:12]
}
