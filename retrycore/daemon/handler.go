package daemon

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"math"
	"strconv"
	"time"
	"unicode/utf8"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker"
)

// Delivery is one message as a handler sees it.
type Delivery struct {
	MessageID   string // message_id, or the stable content id (broker.Message.ID)
	Exchange    string // the exchange it was delivered from
	RoutingKey  string
	Queue       string // the main queue
	Attempt     int    // 1-based: retries done + 1
	Redelivered bool
	ContentType string
	Headers     amqp.Table // do not modify: the loop copies them for retries
	Body        []byte
}

// Handler processes one delivery. Returning nil acks it; an error wrapped
// with Permanent parks it at once; any other error (and the handler
// timeout) retries it through the delay tiers until max_retries.
type Handler interface {
	Handle(ctx context.Context, d Delivery) error
}

// HandlerFunc adapts a function to Handler.
type HandlerFunc func(ctx context.Context, d Delivery) error

// Handle calls f.
func (f HandlerFunc) Handle(ctx context.Context, d Delivery) error { return f(ctx, d) }

// PlainHeaders is the readable JSON form of headers that the exec handler
// gets in PARKINGLOT_HEADERS and the HTTP handler in X-Parkinglot-Headers:
// strings as strings; byte arrays as strings when they are UTF-8, else
// base64; integers and floats as numbers; booleans; timestamps as RFC 3339
// strings; decimals as decimal strings; tables as objects; arrays as
// arrays; void as null. The wire types are not kept (broker.EncodeTable is
// the typed form).
func PlainHeaders(h amqp.Table) json.RawMessage {
	if len(h) == 0 {
		return json.RawMessage("{}")
	}
	b, err := json.Marshal(broker.Plain(h, plainLeaf))
	if err != nil {
		return json.RawMessage("{}")
	}
	return b
}

// plainLeaf is a scalar in PlainHeaders' JSON form.
func plainLeaf(v any) any {
	switch x := v.(type) {
	case []byte:
		if utf8.Valid(x) {
			return string(x)
		}
		return base64.StdEncoding.EncodeToString(x)
	case time.Time:
		return x.UTC().Format(time.RFC3339)
	case amqp.Decimal:
		return decimalText(x)
	case float32, float64:
		if f, ok := finite(x); ok {
			return f
		}
		return strconv.FormatFloat(toFloat(x), 'g', -1, 64)
	}
	return v // strings, bool, integers, nil
}

func decimalText(d amqp.Decimal) string {
	s := strconv.FormatInt(int64(d.Value), 10)
	if d.Scale == 0 {
		return s
	}
	neg := d.Value < 0
	if neg {
		s = s[1:]
	}
	for len(s) <= int(d.Scale) {
		s = "0" + s
	}
	s = s[:len(s)-int(d.Scale)] + "." + s[len(s)-int(d.Scale):]
	if neg {
		s = "-" + s
	}
	return s
}

func toFloat(v any) float64 {
	switch f := v.(type) {
	case float32:
		return float64(f)
	case float64:
		return f
	}
	return 0
}

// finite reports whether a float can be written as a JSON number.
func finite(v any) (float64, bool) {
	f := toFloat(v)
	return f, !math.IsNaN(f) && !math.IsInf(f, 0)
}
