package format

import (
	"fmt"
	"sort"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/retrycore"
)

// Field is one named value of a message as show and the TUI list it.
type Field struct{ Name, Value string }

// Properties are a message's non-empty basic properties, in AMQP's order,
// worded the same for show and the TUI.
func Properties(p broker.Properties) []Field {
	var out []Field
	add := func(k, v string) {
		if v != "" {
			out = append(out, Field{k, v})
		}
	}
	add("message_id", p.MessageID)
	add("content_type", p.ContentType)
	add("content_encoding", p.ContentEncoding)
	switch p.DeliveryMode {
	case 0:
	case amqp.Persistent:
		add("delivery_mode", "2 (persistent)")
	case amqp.Transient:
		add("delivery_mode", "1 (transient)")
	default:
		add("delivery_mode", fmt.Sprint(p.DeliveryMode))
	}
	if p.Priority != 0 {
		add("priority", fmt.Sprint(p.Priority))
	}
	add("correlation_id", p.CorrelationID)
	add("reply_to", p.ReplyTo)
	add("expiration", p.Expiration)
	if !p.Timestamp.IsZero() {
		add("timestamp", p.Timestamp.UTC().Format(time.RFC3339))
	}
	add("type", p.Type)
	add("user_id", p.UserID)
	add("app_id", p.AppID)
	return out
}

// firstHeaders come first in a message's headers, in this order: what
// people look for first; the rest follow by name.
var firstHeaders = []string{
	retrycore.HeaderLastError, retrycore.HeaderRetryCount, retrycore.HeaderFailureKind,
	retrycore.HeaderOriginalExchange, retrycore.HeaderOriginalRoutingKey, retrycore.HeaderOriginalQueue,
	retrycore.HeaderFirstFailedAt, retrycore.HeaderParkedAt,
}

// HeaderOrder is the order show and the TUI list h's headers in.
func HeaderOrder(h amqp.Table) []string {
	out := make([]string, 0, len(h))
	seen := map[string]bool{}
	for _, k := range firstHeaders {
		if _, ok := h[k]; ok {
			out = append(out, k)
			seen[k] = true
		}
	}
	rest := make([]string, 0, len(h))
	for k := range h {
		if !seen[k] {
			rest = append(rest, k)
		}
	}
	sort.Strings(rest)
	return append(out, rest...)
}
