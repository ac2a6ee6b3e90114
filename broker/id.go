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
// drops them (README, "The CLI" and "Headers").
func IsDeliveryHeader(k string) bool {
	return k == "x-delivery-count" || k == "x-acquired-count"
}

// DropDeliveryHeaders removes the delivery headers from h (a copy's).
func DropDeliveryHeaders(h amqp.Table) {
	delete(h, "x-delivery-count")
	delete(h, "x-acquired-count")
}

// ID is the message's message_id; else, for a Celery task (task protocol
// 2: a "task" header), its task id, the "id" header or else the
// correlation_id (README, "The CLI"); else a stable content id:
// "sha256:" and the first 12 hex digits of a hash over the body and the
// headers.
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

// ContentID hashes the body and the typed form of the headers (keys sorted),
// leaving out headers the broker changes on redelivery.
func ContentID(body []byte, headers amqp.Table) string {
	stable := headers
	for k := range headers {
		if IsDeliveryHeader(k) {
			stable = make(amqp.Table, len(headers))
			for k2, v := range headers {
				if !IsDeliveryHeader(k2) {
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
