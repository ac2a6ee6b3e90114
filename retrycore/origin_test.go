package retrycore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker"
)

// recordedQueues answers QueueArguments from a recording's topology, as the
// management API would have answered on the broker it was recorded on.
type recordedQueues struct {
	r     recording
	asked []string
}

func (q *recordedQueues) QueueArguments(_ context.Context, queue string) (amqp.Table, error) {
	q.asked = append(q.asked, queue)
	args, ok, err := q.r.queueArgs(queue)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("queue %q: %w", queue, broker.ErrNotFound)
	}
	return args, nil
}

// fixedQueues answers every queue with the same arguments or error.
type fixedQueues struct {
	args amqp.Table
	err  error
}

func (f fixedQueues) QueueArguments(context.Context, string) (amqp.Table, error) {
	return f.args, f.err
}

// TestResolveOriginRecorded: each rule of ResolveOrigin on the deliveries
// recorded from the real broker, with the source of the answer.
func TestResolveOriginRecorded(t *testing.T) {
	to := &Destination{Exchange: "manual.exchange", RoutingKey: "manual.key"}
	cfg := &Destination{Exchange: "configured.exchange", RoutingKey: "configured.key"}
	cases := []struct {
		name     string
		scenario string
		edit     func(h amqp.Table)
		override *Destination
		def      *Destination
		mgmt     bool // answer QueueArguments from the recorded topology
		want     Origin
	}{
		{name: "--to wins over everything", scenario: "retrycore-contract", override: to, def: cfg, mgmt: true,
			want: Origin{Destination: *to, Source: SourceOverride, Queue: "payment.main.queue"}},
		{name: "config default next", scenario: "retrycore-contract", def: cfg, mgmt: true,
			want: Origin{Destination: *cfg, Source: SourceConfig, Queue: "payment.main.queue"}},
		{name: "x-original-* before x-death", scenario: "retrycore-contract", mgmt: true,
			want: Origin{Destination: Destination{"main.exchange", "payment.execute"}, Source: SourceOriginalHeaders, Queue: "payment.main.queue"}},
		{name: "Spring's x-original-routingKey", scenario: "spring-republish", mgmt: true,
			want: Origin{Destination: Destination{"orders.exchange", "orders.created"}, Source: SourceSpring, Queue: "orders.queue"}},
		{name: "seed-2: x-death entry of x-first-death-queue", scenario: "seed2-nack-ttl", mgmt: true,
			want: Origin{Destination: Destination{"invoice.exchange", "invoice.created"}, Source: SourceFirstDeath, Queue: "invoice.main.queue"}},
		{name: "seed-1: followed through the delay queue's dead-letter arguments", scenario: "seed1-republish", mgmt: true,
			want: Origin{Destination: Destination{"main.exchange", "payment.execute"}, Source: SourceDelayQueue + " payment.retry.1s"}},
		{name: "seed-1 without the management API: the delay queue's entry, said so", scenario: "seed1-republish",
			want: Origin{Destination: Destination{"retry.exchange", "payment.retry"}, Source: SourceFirstDeath + " (delay queue not followed: no management API)"}},
		{name: "MassTransit: MT-Fault-InputAddress names the failed queue", scenario: "masstransit-error", mgmt: true,
			want: Origin{Destination: Destination{"", "orders"}, Source: SourceFailedQueue, Queue: "orders"}},
		{name: "MassTransit without an input address: X_error came from X", scenario: "masstransit-error", mgmt: true,
			edit: func(h amqp.Table) { delete(h, "MT-Fault-InputAddress") },
			want: Origin{Destination: Destination{"", "orders"}, Source: SourceMassTransitQueue, Queue: "orders"}},
		{name: "Spring without x-original-*: its x-death", scenario: "spring-republish", mgmt: true,
			edit: func(h amqp.Table) { delete(h, HeaderOriginalExchange) },
			want: Origin{Destination: Destination{"orders.exchange", "orders.created"}, Source: SourceFirstDeath, Queue: "orders.queue"}},
		{name: "our x-original-queue alone is a failed-queue header", scenario: "all-types",
			edit: func(h amqp.Table) { h[HeaderOriginalQueue] = "payment.main.queue" },
			want: Origin{Destination: Destination{"", "payment.main.queue"}, Source: SourceFailedQueue, Queue: "payment.main.queue"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := loadRecording(t, c.scenario)
			h := r.Message.Headers
			if c.edit != nil {
				c.edit(h)
			}
			q := OriginQuery{Override: c.override, Default: c.def, ParkingLot: r.ParkingLot}
			var rq *recordedQueues
			if c.mgmt {
				rq = &recordedQueues{r: r}
				q.Queues = rq
			}
			got, err := ResolveOrigin(context.Background(), h, q)
			if err != nil {
				t.Fatalf("ResolveOrigin: %v", err)
			}
			if got != c.want {
				t.Errorf("origin %+v\n want  %+v", got, c.want)
			}
			if c.scenario == "seed1-republish" && rq != nil && (len(rq.asked) != 1 || rq.asked[0] != "payment.retry.1s") {
				t.Errorf("asked the management API about %q, want only the delay queue", rq.asked)
			}
		})
	}
}

// TestResolveOriginRefuses: with nothing to go on, the answer is the exact
// sentence of ErrUnknownOrigin, never a guess.
func TestResolveOriginRefuses(t *testing.T) {
	const sentence = "cannot tell where this message came from"
	if ErrUnknownOrigin.Error() != sentence {
		t.Fatalf("ErrUnknownOrigin says %q", ErrUnknownOrigin)
	}
	allTypes := loadRecording(t, "all-types")
	cases := []struct {
		name       string
		h          amqp.Table
		parkingLot string
	}{
		{"recorded message with no origin headers", allTypes.Message.Headers, allTypes.ParkingLot},
		{"recorded permanent failure without origin headers", loadRecording(t, "quorum-browsed").Message.Headers, "payment.error.quorum"},
		{"nil headers", nil, "pl"},
		{"x-original-exchange without a routing key", amqp.Table{HeaderOriginalExchange: "main.exchange"}, "pl"},
		{"x-original-routing-key without an exchange", amqp.Table{HeaderOriginalRoutingKey: "payment.execute"}, "pl"},
		{"x-original-* of wrong types", amqp.Table{HeaderOriginalExchange: int32(1), HeaderOriginalRoutingKey: true}, "pl"},
		{"x-first-death-queue not in x-death", amqp.Table{HeaderFirstDeathQueue: "gone",
			HeaderDeath: []any{amqp.Table{"queue": "other", "reason": "rejected", "exchange": "e", "routing-keys": []any{"k"}}}}, "pl"},
		{"x-death entry without routing keys", amqp.Table{HeaderDeath: []any{amqp.Table{"queue": "q", "reason": "rejected", "exchange": "e"}}}, "pl"},
		{"routing keys of wrong types", amqp.Table{HeaderDeath: []any{amqp.Table{"queue": "q", "reason": "rejected", "exchange": "e", "routing-keys": []any{int32(1), nil}}}}, "pl"},
		{"x-death a string", amqp.Table{HeaderDeath: "rejected"}, "pl"},
		{"_error queue without MassTransit headers", amqp.Table{"x-last-error": "boom"}, "orders_error"},
		{"MassTransit headers but not an _error queue", amqp.Table{"MT-Reason": "fault"}, "orders.dlq"},
		{"a queue named _error", amqp.Table{"MT-Reason": "fault"}, "_error"},
		{"MT-Fault-InputAddress without a path", amqp.Table{"MT-Fault-InputAddress": "rabbitmq://localhost"}, "pl"},
		{"MT-Fault-InputAddress not a URL", amqp.Table{"MT-Fault-InputAddress": "::::"}, "pl"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o, err := ResolveOrigin(context.Background(), c.h, OriginQuery{ParkingLot: c.parkingLot, Queues: fixedQueues{}})
			if !errors.Is(err, ErrUnknownOrigin) || err.Error() != sentence {
				t.Fatalf("got %+v, %v; want %q", o, err, sentence)
			}
			if o != (Origin{}) {
				t.Errorf("refusal came with an origin %+v", o)
			}
		})
	}
}

// TestResolveOriginDelayQueue covers the delay-queue rule's edges.
func TestResolveOriginDelayQueue(t *testing.T) {
	expired := amqp.Table{
		HeaderFirstDeathQueue: "payment.retry.15s", HeaderFirstDeathReason: "expired",
		HeaderDeath: []any{amqp.Table{"queue": "payment.retry.15s", "reason": "expired", "count": int64(3),
			"exchange": "retry.exchange", "routing-keys": []any{"payment.retry"}}},
	}
	firstDeath := Origin{Destination: Destination{"retry.exchange", "payment.retry"}, Source: SourceFirstDeath}
	mainWithTTL := firstDeath
	mainWithTTL.Queue = "payment.retry.15s" // it expired in the queue it was consumed from
	cases := []struct {
		name       string
		qa         QueueArgs
		parkingLot string
		want       Origin
		wantErr    string
	}{
		{"dead-letter exchange and key", fixedQueues{args: amqp.Table{"x-dead-letter-exchange": "main.exchange", "x-dead-letter-routing-key": "payment.execute"}}, "pl",
			Origin{Destination: Destination{"main.exchange", "payment.execute"}, Source: SourceDelayQueue + " payment.retry.15s"}, ""},
		{"no dead-letter key keeps the routing key", fixedQueues{args: amqp.Table{"x-dead-letter-exchange": "main.exchange"}}, "pl",
			Origin{Destination: Destination{"main.exchange", "payment.retry"}, Source: SourceDelayQueue + " payment.retry.15s"}, ""},
		{"default exchange", fixedQueues{args: amqp.Table{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": "payment.main.queue"}}, "pl",
			Origin{Destination: Destination{"", "payment.main.queue"}, Source: SourceDelayQueue + " payment.retry.15s"}, ""},
		{"no dead-letter exchange: not a delay queue", fixedQueues{args: amqp.Table{"x-message-ttl": int32(15000)}}, "pl", firstDeath, ""},
		{"dead-letter exchange of a wrong type", fixedQueues{args: amqp.Table{"x-dead-letter-exchange": int32(1)}}, "pl", firstDeath, ""},
		{"dead-letters into the parking lot: a main queue with a TTL", fixedQueues{args: amqp.Table{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": "payment.dlq"}}, "payment.dlq", mainWithTTL, ""},
		{"lookup fails: an error, not a guess", fixedQueues{err: errors.New("management API: 401")}, "pl", Origin{}, `look up delay queue "payment.retry.15s": management API: 401`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := ResolveOrigin(context.Background(), expired, OriginQuery{ParkingLot: c.parkingLot, Queues: c.qa})
			if c.wantErr != "" {
				if err == nil || err.Error() != c.wantErr {
					t.Fatalf("error %v, want %q", err, c.wantErr)
				}
				return
			}
			if err != nil || got != c.want {
				t.Fatalf("got %+v, %v; want %+v", got, err, c.want)
			}
		})
	}
	// A rejected first death is the main queue itself: nothing to follow.
	rejected := broker.CloneTable(expired)
	rejected[HeaderFirstDeathReason] = "rejected"
	rejected[HeaderDeath].([]any)[0].(amqp.Table)["reason"] = "rejected"
	got, err := ResolveOrigin(context.Background(), rejected, OriginQuery{Queues: fixedQueues{err: errors.New("must not be asked")}})
	if err != nil || got.Source != SourceFirstDeath || got.Queue != "payment.retry.15s" {
		t.Fatalf("rejected first death: %+v, %v", got, err)
	}
}

func TestFailedQueueHeaders(t *testing.T) {
	cases := []struct {
		name string
		h    amqp.Table
		want string
	}{
		{"ours", amqp.Table{HeaderOriginalQueue: "payment.main.queue", "NServiceBus.FailedQ": "nsb"}, "payment.main.queue"},
		{"NServiceBus queue@machine", amqp.Table{"NServiceBus.FailedQ": "Sales@web-01"}, "Sales"},
		{"NServiceBus queue", amqp.Table{"NServiceBus.FailedQ": "Sales"}, "Sales"},
		{"Rebus", amqp.Table{"rbs2-source-queue": "billing"}, "billing"},
		{"MassTransit", amqp.Table{"MT-Fault-InputAddress": "rabbitmq://localhost/orders"}, "orders"},
		{"MassTransit with vhost and query", amqp.Table{"MT-Fault-InputAddress": "rabbitmq://mq:5672/prod/submit-order?temporary=false"}, "submit-order"},
		{"MassTransit trailing slash", amqp.Table{"MT-Fault-InputAddress": "rabbitmq://localhost/orders/"}, "orders"},
		{"bytes", amqp.Table{"rbs2-source-queue": []byte("billing")}, "billing"},
		{"wrong type", amqp.Table{HeaderOriginalQueue: int32(1)}, ""},
	}
	for _, c := range cases {
		if got := failedQueue(c.h); got != c.want {
			t.Errorf("%s: failedQueue = %q, want %q", c.name, got, c.want)
		}
	}
	// The failed-queue rule comes after x-death and before MassTransit naming.
	h := amqp.Table{"NServiceBus.FailedQ": "Sales@web-01", "MT-Reason": "fault"}
	o, err := ResolveOrigin(context.Background(), h, OriginQuery{ParkingLot: "orders_error"})
	if err != nil || o != (Origin{Destination: Destination{"", "Sales"}, Source: SourceFailedQueue, Queue: "Sales"}) {
		t.Fatalf("got %+v, %v", o, err)
	}
}

func TestParseDestination(t *testing.T) {
	cases := []struct {
		in      string
		want    Destination
		wantErr bool
	}{
		{"main.exchange:payment.execute", Destination{"main.exchange", "payment.execute"}, false},
		{":orders", Destination{"", "orders"}, false},
		{"ex:", Destination{"ex", ""}, false},
		{"ex:a:b", Destination{"ex", "a:b"}, false},
		{"orders", Destination{}, true},
		{"", Destination{}, true},
	}
	for _, c := range cases {
		got, err := ParseDestination(c.in)
		if (err != nil) != c.wantErr || got != c.want {
			t.Errorf("ParseDestination(%q) = %+v, %v", c.in, got, err)
		}
		if err != nil && (!strings.Contains(err.Error(), "EXCHANGE:ROUTING_KEY") || !strings.Contains(err.Error(), fmt.Sprintf("%q", c.in))) {
			t.Errorf("error %q does not name the input and the form", err)
		}
	}
	if got := (Destination{"", "orders"}).String(); got != "(default exchange) / orders" {
		t.Errorf("String() = %q", got)
	}
}

// The default exchange with an empty routing key can never route (it
// routes by queue name), so it is refused however it is written or made;
// a named exchange with an empty key is fine (fanout, headers).
func TestDestinationDefaultExchangeNeedsAKey(t *testing.T) {
	for _, in := range []string{":", ""} {
		_, err := ParseDestination(in)
		want := map[string]error{":": ErrNoQueueName, "": ErrNotDestination}[in]
		if !errors.Is(err, want) {
			t.Errorf("ParseDestination(%q) = %v, want %v", in, err, want)
		}
	}
	if err := (Destination{}).Check(); !errors.Is(err, ErrNoQueueName) {
		t.Errorf("Destination{}.Check() = %v, want ErrNoQueueName", err)
	}
	for _, d := range []Destination{{"fanout.ex", ""}, {"", "orders"}} {
		if err := d.Check(); err != nil {
			t.Errorf("%+v.Check() = %v", d, err)
		}
	}
}

// A name AMQP cannot carry (over 255 bytes) is refused when the
// destination is given, not as a failed publish per message; the error
// stays one readable line.
func TestDestinationNamesFitAShortString(t *testing.T) {
	long := strings.Repeat("a", 256)
	for _, in := range []string{"ex:" + long, long + ":rk"} {
		_, err := ParseDestination(in)
		if !errors.Is(err, ErrNameTooLong) || len(err.Error()) > 200 {
			t.Errorf("ParseDestination(%d bytes) = %v, want a short ErrNameTooLong", len(in), err)
		}
	}
	if err := (Destination{strings.Repeat("e", 255), strings.Repeat("k", 255)}).Check(); err != nil {
		t.Errorf("255 bytes each: %v", err)
	}
}
