package broker

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	amqp "github.com/rabbitmq/amqp091-go"
)

// MaxShortString is the most bytes of an AMQP 0-9-1 short string (a
// one-byte length): a property, a header name, an exchange name, a
// routing key.
const MaxShortString = 255

// maxExpiration is the largest per-message TTL RabbitMQ accepts, ten
// 365-day years in milliseconds (3.10 to 4.3 alike; the integration test
// holds each version to it); a larger one closes the channel.
const maxExpiration = 315_360_000_000

// WireError is a message field AMQP cannot carry as it is. Published, it
// would cost the channel or the connection (RabbitMQ's "invalid
// expiration"; amqp091-go failing to write a short string), so whatever
// publishes a hand-made message checks first (Publishable).
type WireError struct {
	Field   string // "properties.expiration", `header name "…"`
	Problem string
}

func (e *WireError) Error() string { return e.Field + " " + e.Problem }

// Publishable checks what the broker or amqp091-go would refuse only at
// publish time: an expiration that is not a whole number of milliseconds
// in decimal digits, or is over RabbitMQ's most, and a short string (a
// property, a header table key, nested ones too) over 255 bytes. The error
// is a *WireError.
func Publishable(m Message) error {
	p := m.Properties
	for _, f := range shortStrings(p) {
		if len(f.v) > MaxShortString {
			return &WireError{"properties." + f.name, tooLong(f.v)}
		}
	}
	// RabbitMQ reads the expiration as a non-negative integer and closes
	// the channel on anything else ("" is no expiration).
	if e := p.Expiration; e != "" {
		if strings.Trim(e, "0123456789") != "" {
			return &WireError{"properties.expiration", fmt.Sprintf("%q: want a whole number of milliseconds, 0 or more, in decimal digits", Truncate(e, 40))}
		}
		if n, err := strconv.ParseUint(e, 10, 64); err != nil || n > maxExpiration {
			return &WireError{"properties.expiration", fmt.Sprintf("%q: RabbitMQ takes at most %d milliseconds (10 years)", Truncate(e, 40), uint64(maxExpiration))}
		}
	}
	return tableKeys(m.Headers, "header name")
}

// namedString is a message field and its name in the JSON form.
type namedString struct{ name, v string }

// shortStrings are the short-string properties, by their JSON names.
func shortStrings(p Properties) []namedString {
	return []namedString{
		{"content_type", p.ContentType}, {"content_encoding", p.ContentEncoding},
		{"correlation_id", p.CorrelationID}, {"reply_to", p.ReplyTo},
		{"expiration", p.Expiration}, {"message_id", p.MessageID},
		{"type", p.Type}, {"user_id", p.UserID}, {"app_id", p.AppID},
	}
}

func tooLong(s string) string {
	return fmt.Sprintf("is %d bytes; AMQP allows at most %d", len(s), MaxShortString)
}

// tableKeys checks every key of t and of the tables within it, in name
// order so the answer is stable.
func tableKeys(t amqp.Table, what string) error {
	keys := make([]string, 0, len(t))
	for k := range t {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if len(k) > MaxShortString {
			return &WireError{fmt.Sprintf("%s %q", what, Truncate(k, 40)), tooLong(k)}
		}
	}
	for _, k := range keys {
		if err := valueKeys(t[k], fmt.Sprintf("%s %q", what, k)); err != nil {
			return err
		}
	}
	return nil
}

func valueKeys(v any, path string) error {
	switch x := v.(type) {
	case amqp.Table:
		return tableKeys(x, path+": key")
	case map[string]any:
		return tableKeys(amqp.Table(x), path+": key")
	case []any:
		for i, e := range x {
			if err := valueKeys(e, fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	}
	return nil
}
