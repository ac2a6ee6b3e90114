package retrycore

import (
	"math"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	amqp "github.com/rabbitmq/amqp091-go"
)

func TestOneLine(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"trimmed", "  boom  ", "boom"},
		{"first line", "boom\nat main.go:12\nat …", "boom"},
		{"CRLF", "boom\r\nmore", "boom"},
		{"leading blank lines", "\n\n  boom\nmore", "boom"},
		{"invalid UTF-8", "a\xffb", "a\uFFFDb"},
		{"empty", "", ""},
		{"exactly the limit", strings.Repeat("x", MaxErrorLen), strings.Repeat("x", MaxErrorLen)},
		{"one over", strings.Repeat("x", MaxErrorLen+1), strings.Repeat("x", MaxErrorLen-len("…")) + "…"},
		{"cut inside a rune", strings.Repeat("€", 400), strings.Repeat("€", (MaxErrorLen-len("…"))/3) + "…"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := OneLine(c.in)
			if got != c.want {
				t.Errorf("OneLine = %q (%d bytes), want %q", got, len(got), c.want)
			}
			if len(got) > MaxErrorLen || !utf8.ValidString(got) || strings.ContainsAny(got, "\r\n") {
				t.Errorf("OneLine gave %d bytes, valid %v", len(got), utf8.ValidString(got))
			}
		})
	}
}

func TestAsInt(t *testing.T) {
	cases := []struct {
		v    any
		want int64
		ok   bool
	}{
		{int8(-8), -8, true}, {uint8(8), 8, true}, {int16(-16), -16, true}, {uint16(16), 16, true},
		{int32(-32), -32, true}, {uint32(32), 32, true}, {int64(math.MinInt64), math.MinInt64, true},
		{int(7), 7, true}, {uint64(64), 64, true}, {uint64(math.MaxUint64), 0, false},
		{2.0, 2, true}, {2.5, 0, false}, {float32(4), 4, true}, {float32(4.5), 0, false},
		{math.Inf(1), 0, false}, {math.NaN(), 0, false}, {1e19, 0, false},
		{"42", 42, true}, {" 42\n", 42, true}, {"-3", -3, true}, {"4.0", 0, false}, {"", 0, false}, {"0x10", 0, false},
		{true, 0, false}, {nil, 0, false}, {[]byte("1"), 0, false}, {amqp.Decimal{Value: 1}, 0, false},
	}
	for _, c := range cases {
		got, ok := asInt(c.v)
		if got != c.want || ok != c.ok {
			t.Errorf("asInt(%#v) = %d, %v; want %d, %v", c.v, got, ok, c.want, c.ok)
		}
	}
}

func TestAsString(t *testing.T) {
	cases := []struct {
		v    any
		want string
		ok   bool
	}{
		{"s", "s", true}, {"", "", true}, {[]byte("b"), "b", true}, {"\xff", "\xff", true},
		{int32(1), "", false}, {nil, "", false}, {amqp.Table{}, "", false},
	}
	for _, c := range cases {
		got, ok := asString(c.v)
		if got != c.want || ok != c.ok {
			t.Errorf("asString(%#v) = %q, %v; want %q, %v", c.v, got, ok, c.want, c.ok)
		}
	}
	if got := headerString(amqp.Table{"k": int8(1)}, "k"); got != "" {
		t.Errorf("headerString of a number = %q", got)
	}
	if got := headerString(nil, "k"); got != "" {
		t.Errorf("headerString of nil headers = %q", got)
	}
}

func TestAsTime(t *testing.T) {
	at := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		name string
		v    any
		want time.Time
		ok   bool
	}{
		{"AMQP timestamp", time.Unix(at.Unix(), 0), at, true},
		{"zero time", time.Time{}, time.Time{}, false},
		{"RFC 3339", "2024-05-01T12:00:00Z", at, true},
		{"RFC 3339 with offset", "2024-05-01T14:00:00+02:00", at, true},
		{"RFC 3339 nano (MassTransit)", "2024-05-01T12:00:00.1234567Z", at.Add(123456700), true},
		{"space and Z", "2024-05-01 12:00:00Z", at, true},
		{"NServiceBus wire format", "2024-05-01 12:00:00:654321 Z", at.Add(654321000), true},
		{"Unix seconds", int64(at.Unix()), at, true},
		{"Unix seconds int32", int32(at.Unix()), at, true},
		{"Unix milliseconds", at.UnixMilli() + 5, at.Add(5 * time.Millisecond), true},
		{"zero", int64(0), time.Time{}, false},
		{"negative", int32(-1), time.Time{}, false},
		{"text", "yesterday", time.Time{}, false},
		{"date only", "2024-05-01", time.Time{}, false},
		{"bool", true, time.Time{}, false},
		{"nil", nil, time.Time{}, false},
	}
	for _, c := range cases {
		got, ok := asTime(c.v)
		if ok != c.ok || !got.Equal(c.want) {
			t.Errorf("%s: asTime(%#v) = %v, %v; want %v, %v", c.name, c.v, got, ok, c.want, c.ok)
		}
	}
}
