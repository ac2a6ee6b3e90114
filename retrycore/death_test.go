package retrycore

import (
	"reflect"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

func TestDeathsRecordedShape(t *testing.T) {
	// As amqp091-go decodes it: entries are amqp.Table, count int64,
	// time time.Time, routing-keys []interface{} of strings.
	at := time.Unix(1714564800, 0)
	h := amqp.Table{HeaderDeath: []any{
		amqp.Table{"count": int64(3), "reason": "expired", "queue": "payment.retry.15s", "time": at,
			"exchange": "retry.exchange", "routing-keys": []any{"payment.retry", "cc"}, "original-expiration": "15000"},
		amqp.Table{"count": int64(1), "reason": "rejected", "queue": "payment.main.queue", "time": at.Add(-time.Minute),
			"exchange": "main.exchange", "routing-keys": []any{"payment.execute"}},
	}}
	deaths, problems := Deaths(h)
	want := []Death{
		{Queue: "payment.retry.15s", Reason: "expired", Count: 3, Exchange: "retry.exchange", RoutingKeys: []string{"payment.retry", "cc"}, Time: at, OriginalExpiration: "15000"},
		{Queue: "payment.main.queue", Reason: "rejected", Count: 1, Exchange: "main.exchange", RoutingKeys: []string{"payment.execute"}, Time: at.Add(-time.Minute)},
	}
	if !reflect.DeepEqual(deaths, want) || problems != nil {
		t.Fatalf("got %+v, %q\nwant %+v", deaths, problems, want)
	}
}

// TestDeathsMalformed: x-death of any shape decodes without panicking;
// what is odd is reported in one line each.
func TestDeathsMalformed(t *testing.T) {
	entry := func(kv ...any) amqp.Table {
		e := amqp.Table{}
		for i := 0; i+1 < len(kv); i += 2 {
			e[kv[i].(string)] = kv[i+1]
		}
		return e
	}
	thousand := make([]any, 1000)
	for i := range thousand {
		thousand[i] = entry("queue", "q", "reason", "rejected", "count", int64(i+1))
	}
	cases := []struct {
		name     string
		xdeath   any
		deaths   int
		first    Death
		problems []string // substrings, in order
	}{
		{"absent", nil, 0, Death{}, nil},
		{"empty array", []any{}, 0, Death{}, nil},
		{"a table instead of an array", entry("queue", "q", "reason", "rejected", "count", int64(2)), 1,
			Death{Queue: "q", Reason: "rejected", Count: 2}, []string{"x-death is a table, not an array of tables"}},
		{"a map instead of an array", map[string]any{"queue": "q"}, 1, Death{Queue: "q"}, []string{"is a table"}},
		{"a string", "rejected", 0, Death{}, []string{"x-death is a string, not an array of tables"}},
		{"a number", int32(3), 0, Death{}, []string{"x-death is a int32"}},
		{"bytes", []byte("x"), 0, Death{}, []string{"x-death is a []uint8"}},
		{"entries that are not tables", []any{"x", int64(1), nil, []any{}, entry("queue", "q")}, 1, Death{Queue: "q"},
			[]string{"entry 0 is a string", "entry 1 is a int64", "entry 2 is a <nil>", "entry 3 is a []interface {}"}},
		{"count as a decimal string", []any{entry("queue", "q", "count", "3")}, 1, Death{Queue: "q", Count: 3}, nil},
		{"count as a word", []any{entry("queue", "q", "count", "three")}, 1, Death{Queue: "q"}, []string{"entry 0: count is a string"}},
		{"count as a table", []any{entry("queue", "q", "count", amqp.Table{})}, 1, Death{Queue: "q"}, []string{"count is a amqp091.Table"}},
		{"count of another integer type", []any{entry("count", uint16(7))}, 1, Death{Count: 7}, nil},
		{"fields of wrong types", []any{entry("queue", int32(1), "reason", true, "exchange", 1.5, "time", "noon", "original-expiration", []any{})}, 1, Death{}, nil},
		{"byte-array strings", []any{entry("queue", []byte("q"), "reason", []byte("expired"))}, 1, Death{Queue: "q", Reason: "expired"}, nil},
		{"routing-keys a string", []any{entry("routing-keys", "rk")}, 1, Death{RoutingKeys: []string{"rk"}}, nil},
		{"routing-keys of wrong types", []any{entry("routing-keys", []any{int32(1), "rk", nil, []byte("b"), amqp.Table{}})}, 1, Death{RoutingKeys: []string{"rk", "b"}}, nil},
		{"routing-keys a number", []any{entry("routing-keys", int64(1))}, 1, Death{}, nil},
		{"routing-keys a Go []string", []any{entry("routing-keys", []string{"rk"})}, 1, Death{}, nil},
		{"invalid UTF-8", []any{entry("queue", "q\xff", "reason", "re\xc3\x28")}, 1, Death{Queue: "q\xff", Reason: "re\xc3\x28"}, nil},
		{"time as Unix seconds", []any{entry("time", int64(1714564800))}, 1, Death{Time: time.Unix(1714564800, 0)}, nil},
		{"1,000 entries", thousand, maxDeaths, Death{Queue: "q", Reason: "rejected", Count: 1},
			[]string{"x-death has 1000 entries; showing the newest 256"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := amqp.Table{}
			if c.xdeath != nil {
				h[HeaderDeath] = c.xdeath
			}
			deaths, problems := Deaths(h)
			if len(deaths) != c.deaths {
				t.Fatalf("%d deaths, want %d: %+v", len(deaths), c.deaths, deaths)
			}
			if c.deaths > 0 && !reflect.DeepEqual(deaths[0], c.first) {
				t.Errorf("first entry %+v, want %+v", deaths[0], c.first)
			}
			if len(problems) != len(c.problems) {
				t.Fatalf("problems %q, want %d like %q", problems, len(c.problems), c.problems)
			}
			for i, p := range problems {
				if !strings.Contains(p, c.problems[i]) || strings.Contains(p, "\n") {
					t.Errorf("problem %q, want one line containing %q", p, c.problems[i])
				}
			}
			// Decode carries the same problems and never panics.
			if f := Decode(h); !reflect.DeepEqual(f.Problems, problems) {
				t.Errorf("Decode problems %q, Deaths says %q", f.Problems, problems)
			}
		})
	}
}

func TestFirstDeath(t *testing.T) {
	deaths := []any{
		amqp.Table{"queue": "newest", "reason": "expired", "exchange": "e2"},
		amqp.Table{"queue": "oldest", "reason": "rejected", "exchange": "e1"},
	}
	cases := []struct {
		name string
		h    amqp.Table
		want DeathRef
	}{
		{"x-first-death-* wins", amqp.Table{HeaderDeath: deaths, HeaderFirstDeathQueue: "named", HeaderFirstDeathReason: "maxlen", HeaderFirstDeathExchange: "ex"},
			DeathRef{Queue: "named", Reason: "maxlen", Exchange: "ex"}},
		{"without them, the oldest entry", amqp.Table{HeaderDeath: deaths}, DeathRef{Queue: "oldest", Reason: "rejected", Exchange: "e1"}},
		{"nothing", amqp.Table{}, DeathRef{}},
		{"wrong types are empty", amqp.Table{HeaderFirstDeathQueue: int32(1)}, DeathRef{}},
	}
	for _, c := range cases {
		if got := Decode(c.h).FirstDeath; got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}
