package broker_test

import (
	"errors"
	"strings"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker"
)

// What the broker or amqp091-go refuses only at publish time is found
// before: an expiration that is not a whole number of milliseconds, and a
// short string over 255 bytes (every property that is one, header names at
// any depth).
func TestPublishable(t *testing.T) {
	long := strings.Repeat("k", 256)
	props := func(set func(*broker.Properties)) broker.Message {
		var m broker.Message
		set(&m.Properties)
		return m
	}
	cases := []struct {
		name string
		m    broker.Message
		want string // "" is publishable
	}{
		{"plain", props(func(p *broker.Properties) { p.Expiration, p.ContentType = "60000", strings.Repeat("c", 255) }), ""},
		{"expiration 0", props(func(p *broker.Properties) { p.Expiration = "0" }), ""},
		{"expiration negative", props(func(p *broker.Properties) { p.Expiration = "-5" }), `properties.expiration "-5": want a whole number`},
		{"expiration fraction", props(func(p *broker.Properties) { p.Expiration = "1.5" }), `properties.expiration "1.5"`},
		{"expiration words", props(func(p *broker.Properties) { p.Expiration = "soon" }), `properties.expiration "soon"`},
		{"expiration plus", props(func(p *broker.Properties) { p.Expiration = "+5" }), `properties.expiration "+5"`},
		{"content_type", props(func(p *broker.Properties) { p.ContentType = long }), "properties.content_type is 256 bytes; AMQP allows at most 255"},
		{"content_encoding", props(func(p *broker.Properties) { p.ContentEncoding = long }), "properties.content_encoding is 256"},
		{"correlation_id", props(func(p *broker.Properties) { p.CorrelationID = long }), "properties.correlation_id is 256"},
		{"reply_to", props(func(p *broker.Properties) { p.ReplyTo = long }), "properties.reply_to is 256"},
		{"expiration long", props(func(p *broker.Properties) { p.Expiration = strings.Repeat("1", 256) }), "properties.expiration is 256"},
		{"message_id", props(func(p *broker.Properties) { p.MessageID = long }), "properties.message_id is 256"},
		{"type", props(func(p *broker.Properties) { p.Type = long }), "properties.type is 256"},
		{"user_id", props(func(p *broker.Properties) { p.UserID = long }), "properties.user_id is 256"},
		{"app_id", props(func(p *broker.Properties) { p.AppID = long }), "properties.app_id is 256"},
		{"multi-byte text counts bytes", props(func(p *broker.Properties) { p.AppID = strings.Repeat("é", 128) }), "properties.app_id is 256 bytes"},
		{"header name", broker.Message{Headers: amqp.Table{long: "v"}}, `header name "kkkk`},
		{"header name 255", broker.Message{Headers: amqp.Table{long[:255]: "v"}}, ""},
		{"nested table key", broker.Message{Headers: amqp.Table{"retry": amqp.Table{long: int32(1)}}}, `header name "retry": key "kkkk`},
		{"table in an array", broker.Message{Headers: amqp.Table{"hops": []any{"a", amqp.Table{long: "b"}}}}, `header name "hops"[1]: key "kkkk`},
		{"long header value is fine", broker.Message{Headers: amqp.Table{"x-last-error": long + long}}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := broker.Publishable(c.m)
			if c.want == "" {
				if err != nil {
					t.Fatalf("Publishable = %v, want nil", err)
				}
				return
			}
			var we *broker.WireError
			if !errors.As(err, &we) || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("Publishable = %v, want a *WireError with %q on one line", err, c.want)
			}
			if len(err.Error()) > 200 {
				t.Errorf("error is %d bytes; a long name should be cut: %s", len(err.Error()), err)
			}
		})
	}
}
