package format

import (
	"errors"
	"testing"

	"github.com/parkinglot/parkinglot/replay"
	"github.com/parkinglot/parkinglot/retrycore"
)

// TestRouteWords: each kind of route preview in its line, its error and
// its warning, as the CLI prints them and -o json carries them.
func TestRouteWords(t *testing.T) {
	ex := retrycore.Destination{Exchange: "orders", RoutingKey: "order.paid"}
	cases := []struct {
		name               string
		r                  replay.RoutePreview
		line, err, warning string
	}{
		{"reaches the failed queue", replay.RoutePreview{Destination: ex, Available: true, Queues: []string{"billing"}, FailedQueues: []string{"billing"}},
			"→ orders / order.paid → reaches billing", "", ""},
		{"management unavailable", replay.RoutePreview{Destination: ex, Unavailable: errors.New("timeout")},
			"→ orders / order.paid → route preview unavailable: timeout", "route preview unavailable: timeout", ""},
		{"no exchange", replay.RoutePreview{Destination: ex, Available: true, Unroutable: true, NoExchange: true, Vhost: "/"},
			`→ orders / order.paid → exchange "orders" does not exist in vhost "/"`, `exchange "orders" does not exist in vhost "/"`,
			`exchange "orders" does not exist in vhost "/": the messages would stay parked`},
		{"unroutable", replay.RoutePreview{Destination: ex, Available: true, Unroutable: true},
			"→ orders / order.paid → unroutable", "", "unroutable: no queue is bound to orders / order.paid; the messages would stay parked"},
		{"other queues", replay.RoutePreview{Destination: ex, Available: true, Queues: []string{"billing", "shipping"}, FailedQueues: []string{"billing"}},
			"→ orders / order.paid → reaches billing, shipping", "",
			"also reaches other queues than the one that failed (billing): shipping — other consumers would get the messages again"},
		{"several queues, failed one unknown", replay.RoutePreview{Destination: ex, Available: true, Queues: []string{"x", "y"}},
			"→ orders / order.paid → reaches x, y", "", "reaches 2 queues (x, y): every consumer of them gets the messages again"},
		{"CC", replay.RoutePreview{Destination: ex, Available: true, Queues: []string{"billing"}, FailedQueues: []string{"billing"}, CC: []string{"audit"}, CCQueues: []string{"audit.q"}},
			"→ orders / order.paid → reaches billing (audit.q through CC/BCC)", "",
			"the CC/BCC header the messages keep (audit) also routes them to audit.q"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := RouteLine(c.r); got != c.line {
				t.Errorf("line %q\nwant %q", got, c.line)
			}
			w := WordRoute(c.r)
			if w.Err != c.err || w.Warning != c.warning {
				t.Errorf("err %q warning %q\nwant err %q warning %q", w.Err, w.Warning, c.err, c.warning)
			}
			if c.r.Warns() != (c.warning != "") {
				t.Errorf("Warns() = %v with warning %q", c.r.Warns(), c.warning)
			}
		})
	}
}
