package format

import (
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/retrycore"
)

func TestValue(t *testing.T) {
	for _, tc := range []struct {
		in   any
		want string
	}{
		{nil, "null"},
		{"timeout", `"timeout"`},
		{"\x1b[2J", `"\x1b[2J"`},
		{"\xff", `"\xff"`},
		{[]byte("text"), `"text"`},
		{[]byte{0, 0xff}, "0x00ff"},
		{int8(3), "3"},
		{true, "true"},
		{time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC), "2024-01-02T03:04:05Z"},
		{amqp.Decimal{Scale: 2, Value: 1234}, "1234e-2"},
		{[]any{"a", []byte{0xff}, nil}, `["a", 0xff, null]`},
		{amqp.Table{"b": int32(1), "a\n": "x"}, `{a\n: "x", b: 1}`},
	} {
		if got := Value(tc.in); got != tc.want {
			t.Errorf("Value(%#v) = %s, want %s", tc.in, got, tc.want)
		}
	}
	long := Value(strings.Repeat("x", 5000))
	if len(long) > MaxValueLen+len("…") || !strings.HasSuffix(long, "…") {
		t.Errorf("a long value is not cut: %d bytes", len(long))
	}
	var deep any = "x"
	for range 20 {
		deep = []any{deep}
	}
	if got := Value(deep); !strings.Contains(got, "…") {
		t.Errorf("deep value not cut: %s", got)
	}
}

func TestResets(t *testing.T) {
	got := Resets(map[string]int{"x-retry-count": 2, "x-death": 3, "celery retries": 2, "a\nb": 1})
	if want := "x-death (3), celery retries (2), x-retry-count (2), a b (1)"; got != want {
		t.Errorf("Resets = %q, want %q", got, want)
	}
}

// TestDestinationQuotesWhatCouldActOnATerminal: a name with a control
// character (a newline would split a plan line, an escape would act on the
// terminal) or invalid UTF-8 is quoted; a plain one, unicode included, is
// as it is.
func TestDestinationQuotesWhatCouldActOnATerminal(t *testing.T) {
	for _, c := range []struct {
		d    retrycore.Destination
		want string
	}{
		{retrycore.Destination{Exchange: "", RoutingKey: "orders"}, "(default) → orders"},
		{retrycore.Destination{Exchange: "pay.ex", RoutingKey: "pay.créé"}, "pay.ex → pay.créé"},
		{retrycore.Destination{Exchange: "ex\x1b[2J", RoutingKey: "a\nb"}, `"ex\x1b[2J" → "a\nb"`},
		{retrycore.Destination{Exchange: "ex", RoutingKey: "bad\xff"}, `ex → "bad\xff"`},
	} {
		if got := Destination(c.d); got != c.want {
			t.Errorf("Destination(%q, %q) = %s, want %s", c.d.Exchange, c.d.RoutingKey, got, c.want)
		}
	}
}
