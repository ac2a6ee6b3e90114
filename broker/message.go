package broker

import (
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// Properties are the AMQP basic properties other than headers.
type Properties struct {
	ContentType     string    `json:"content_type,omitempty"`
	ContentEncoding string    `json:"content_encoding,omitempty"`
	DeliveryMode    uint8     `json:"delivery_mode,omitempty"`
	Priority        uint8     `json:"priority,omitempty"`
	CorrelationID   string    `json:"correlation_id,omitempty"`
	ReplyTo         string    `json:"reply_to,omitempty"`
	Expiration      string    `json:"expiration,omitempty"`
	MessageID       string    `json:"message_id,omitempty"`
	Timestamp       time.Time `json:"timestamp,omitzero"`
	Type            string    `json:"type,omitempty"`
	UserID          string    `json:"user_id,omitempty"`
	AppID           string    `json:"app_id,omitempty"`
}

// Message is one AMQP message with nothing lost: its properties, its typed
// headers and its body, plus the facts of the delivery that brought it.
type Message struct {
	Properties Properties
	Headers    amqp.Table
	Body       []byte

	// Delivery facts; not part of the message when it is published again.
	Exchange    string
	RoutingKey  string
	Redelivered bool
	DeliveryTag uint64
}

// FromDelivery copies a delivery into a Message.
func FromDelivery(d amqp.Delivery) Message {
	return Message{
		Properties: Properties{
			ContentType:     d.ContentType,
			ContentEncoding: d.ContentEncoding,
			DeliveryMode:    d.DeliveryMode,
			Priority:        d.Priority,
			CorrelationID:   d.CorrelationId,
			ReplyTo:         d.ReplyTo,
			Expiration:      d.Expiration,
			MessageID:       d.MessageId,
			Timestamp:       d.Timestamp,
			Type:            d.Type,
			UserID:          d.UserId,
			AppID:           d.AppId,
		},
		Headers:     d.Headers,
		Body:        d.Body,
		Exchange:    d.Exchange,
		RoutingKey:  d.RoutingKey,
		Redelivered: d.Redelivered,
		DeliveryTag: d.DeliveryTag,
	}
}

// Publishing returns the message as amqp091-go publishes it, every property
// and header kept.
func (m Message) Publishing() amqp.Publishing {
	p := m.Properties
	return amqp.Publishing{
		Headers:         m.Headers,
		ContentType:     p.ContentType,
		ContentEncoding: p.ContentEncoding,
		DeliveryMode:    p.DeliveryMode,
		Priority:        p.Priority,
		CorrelationId:   p.CorrelationID,
		ReplyTo:         p.ReplyTo,
		Expiration:      p.Expiration,
		MessageId:       p.MessageID,
		Timestamp:       p.Timestamp,
		Type:            p.Type,
		UserId:          p.UserID,
		AppId:           p.AppID,
		Body:            m.Body,
	}
}

// Clone returns a copy whose headers (deeply) and body can be changed
// without touching m.
func (m Message) Clone() Message {
	c := m
	c.Headers = CloneTable(m.Headers)
	if m.Body != nil {
		c.Body = append([]byte(nil), m.Body...)
	}
	return c
}

// CloneTable copies a table deeply (nested tables, arrays and byte slices).
func CloneTable(t amqp.Table) amqp.Table {
	if t == nil {
		return nil
	}
	out := make(amqp.Table, len(t))
	for k, v := range t {
		out[k] = cloneValue(v)
	}
	return out
}

func cloneValue(v any) any {
	switch x := v.(type) {
	case amqp.Table:
		return CloneTable(x)
	case map[string]any:
		return CloneTable(amqp.Table(x))
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = cloneValue(e)
		}
		return out
	case []byte:
		return append([]byte(nil), x...)
	default:
		return v
	}
}
