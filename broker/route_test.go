package broker

import (
	"strings"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"
)

// TestTopicMatch follows RabbitMQ's topic exchange: words split on ".",
// "*" exactly one word, "#" zero or more, and the empty key has no words
// (the cases marked measured were checked on the local 3.10.8).
func TestTopicMatch(t *testing.T) {
	cases := []struct {
		pattern, key string
		want         bool
	}{
		{"payment.execute", "payment.execute", true},
		{"payment.execute", "payment.executed", false},
		{"payment.*", "payment.execute", true},
		{"payment.*", "payment", false},
		{"payment.*", "payment.a.b", false},
		{"*.execute", "payment.execute", true},
		{"payment.#", "payment", true},
		{"payment.#", "payment.a.b.c", true},
		{"#.error", "error", true},
		{"#.error", "a.b.error", true},
		{"#.error", "a.b.error.x", false},
		{"a.#.z", "a.z", true},
		{"a.#.z", "a.b.c.z", true},
		{"a.#.z", "a.b.c", false},
		{"#.*", "a", true},
		{"*.#.*", "a", false},
		{"*.#.*", "a.b", true},
		{"#.#", "a.b", true},
		{"#", "anything.at.all", true},
		// Empty words are words.
		{"a.*", "a.", true},
		{"a..b", "a..b", true},
		{"*", ".", false},
		{"*.*", ".", true},
		// The empty key has no words (measured: "*", "*.#", "#.*" do not
		// route "", "#" and "" do).
		{"#", "", true},
		{"", "", true},
		{"*", "", false},
		{"*.#", "", false},
		{"#.*", "", false},
		{"", "a", false},
		{"a", "", false},
	}
	for _, c := range cases {
		if got := TopicMatch(c.pattern, c.key); got != c.want {
			t.Errorf("TopicMatch(%q, %q) = %v, want %v", c.pattern, c.key, got, c.want)
		}
	}
}

// TestTopicMatchManyHashes: a backtracking matcher takes exponential time
// on a pattern of many "#" against a long key that does not match; any
// binding on the broker could hold one and stall the route preview.
func TestTopicMatchManyHashes(t *testing.T) {
	pattern := strings.Repeat("#.", 30) + "never"
	key := strings.TrimSuffix(strings.Repeat("w.", 127), ".") // 255 bytes, the longest key
	if TopicMatch(pattern, key) {
		t.Fatal("matched a key without the last word")
	}
	if !TopicMatch(pattern, key+".never") {
		t.Fatal("did not match the key ending in the last word")
	}
}

func TestBindingMatches(t *testing.T) {
	b := func(key string, args amqp.Table) Binding { return Binding{RoutingKey: key, Arguments: args} }
	cases := []struct {
		name    string
		exType  string
		b       Binding
		key     string
		headers amqp.Table
		want    bool
	}{
		{"direct equal", "direct", b("payment.retry", nil), "payment.retry", nil, true},
		{"direct is not a pattern", "direct", b("payment.*", nil), "payment.retry", nil, false},
		{"fanout ignores the key", "fanout", b("x", nil), "y", nil, true},
		{"topic pattern", "topic", b("payment.#", nil), "payment.retry.15s", nil, true},
		{"plugin type routes by key", "x-consistent-hash", b("k", nil), "k", nil, true},
		{"headers all match", "headers", b("", amqp.Table{"x-match": "all", "a": "1", "b": float64(2)}), "", amqp.Table{"a": "1", "b": int32(2)}, true},
		{"headers all missing one", "headers", b("", amqp.Table{"x-match": "all", "a": "1", "b": "2"}), "", amqp.Table{"a": "1"}, false},
		{"headers default is all", "headers", b("", amqp.Table{"a": "1", "b": "2"}), "", amqp.Table{"a": "1"}, false},
		{"headers any one", "headers", b("", amqp.Table{"x-match": "any", "a": "1", "b": "2"}), "", amqp.Table{"b": "2"}, true},
		{"headers any none", "headers", b("", amqp.Table{"x-match": "any", "a": "1"}), "", amqp.Table{"a": "2"}, false},
		{"headers all, no arguments", "headers", b("", amqp.Table{"x-match": "all"}), "", nil, true},
	}
	for _, c := range cases {
		if got := bindingMatches(c.exType, c.b, c.key, c.headers); got != c.want {
			t.Errorf("%s: got %v, want %v", c.name, got, c.want)
		}
	}
}

func TestDestinationAndUnroutable(t *testing.T) {
	if got := Destination("", "orders"); got != "(default exchange) / orders" {
		t.Errorf("Destination default = %q", got)
	}
	if got := Destination("main.exchange", "payment.execute"); got != "main.exchange / payment.execute" {
		t.Errorf("Destination = %q", got)
	}
	if !(Route{}).Unroutable() || (Route{Queues: []string{"q"}}).Unroutable() {
		t.Error("Unroutable wrong")
	}
}
