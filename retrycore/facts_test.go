package retrycore

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker"
)

// TestDecodeRecorded checks what Decode reads from each delivery recorded on
// the real broker. Times are compared with the header they must come from,
// since they differ per recording.
func TestDecodeRecorded(t *testing.T) {
	cases := []struct {
		scenario       string
		attempts       int64
		attemptsSource string
		err, errSource string
		errType        string
		stackPrefix    string
		failureKind    string
		firstDeath     DeathRef
		deaths         []Death // Time left out; checked against parkedFrom
		parkedFrom     string  // the header (or "x-death[0].time") ParkedAt comes from
		firstFailedAt  bool
		deliveryCount  int64
	}{
		{
			scenario: "seed1-republish",
			attempts: 4, attemptsSource: "x-retry-count 3 + 1 (the run that parked it)",
			err: "payment gateway timeout after 5000 ms (attempt 4)", errSource: HeaderLastError,
			firstDeath: DeathRef{Queue: "payment.retry.1s", Reason: "expired", Exchange: "retry.exchange"},
			deaths:     []Death{{Queue: "payment.retry.1s", Reason: "expired", Count: 3, Exchange: "retry.exchange", RoutingKeys: []string{"payment.retry"}}},
			parkedFrom: "x-death[0].time",
		},
		{
			scenario: "seed2-nack-ttl",
			attempts: 4, attemptsSource: "x-death: 3 rejections in invoice.main.queue + 1 after the last delay in invoice.retry.1s",
			err: `customer "c-88" not found in billing`, errSource: HeaderLastError,
			firstDeath: DeathRef{Queue: "invoice.main.queue", Reason: "rejected", Exchange: "invoice.exchange"},
			deaths: []Death{
				{Queue: "invoice.retry.1s", Reason: "expired", Count: 3, Exchange: "", RoutingKeys: []string{"invoice.retry.1s"}},
				{Queue: "invoice.main.queue", Reason: "rejected", Count: 3, Exchange: "invoice.exchange", RoutingKeys: []string{"invoice.created"}},
			},
			parkedFrom: "x-death[0].time",
		},
		{
			scenario: "spring-republish",
			attempts: 2, attemptsSource: "x-death: 1 rejection in orders.queue + 1 after the last delay in orders.queue.retry",
			err: "order 4711 has no shipping address", errSource: "x-exception-message",
			stackPrefix: "org.springframework.amqp.rabbit.support.ListenerExecutionFailedException",
			firstDeath:  DeathRef{Queue: "orders.queue", Reason: "rejected", Exchange: "orders.exchange"},
			deaths: []Death{
				{Queue: "orders.queue.retry", Reason: "expired", Count: 1, Exchange: "", RoutingKeys: []string{"orders.queue.retry"}},
				{Queue: "orders.queue", Reason: "rejected", Count: 1, Exchange: "orders.exchange", RoutingKeys: []string{"orders.created"}},
			},
			parkedFrom: "x-death[0].time",
		},
		{
			scenario: "masstransit-error",
			err:      "Object reference not set to an instance of an object.", errSource: "MT-Fault-Message",
			errType: "System.NullReferenceException", stackPrefix: "   at Orders.Consumers.SubmitOrderConsumer.Consume",
			parkedFrom: "MT-Fault-Timestamp",
		},
		{
			scenario: "retrycore-contract",
			attempts: 4, attemptsSource: "x-retry-count 3 + 1 (the run that parked it)",
			err: "payment gateway timeout after 5000 ms (attempt 4)", errSource: HeaderLastError,
			failureKind: KindRetriesExhausted,
			firstDeath:  DeathRef{Queue: "payment.retry.1s", Reason: "expired", Exchange: "retry.exchange"},
			deaths:      []Death{{Queue: "payment.retry.1s", Reason: "expired", Count: 3, Exchange: "retry.exchange", RoutingKeys: []string{"payment.retry"}}},
			parkedFrom:  HeaderParkedAt, firstFailedAt: true,
		},
		{
			scenario: "quorum-browsed",
			attempts: 1, attemptsSource: "x-retry-count 0 + 1 (the run that parked it)",
			err: "card declined: insufficient funds", errSource: HeaderLastError,
			failureKind: KindPermanent, deliveryCount: 2,
		},
		{scenario: "all-types"},
	}
	seen := map[string]bool{}
	for _, c := range cases {
		seen[c.scenario] = true
		t.Run(c.scenario, func(t *testing.T) {
			h := loadRecording(t, c.scenario).Message.Headers
			f := Decode(h)
			if !reflect.DeepEqual(h, loadRecording(t, c.scenario).Message.Headers) {
				t.Fatal("Decode changed the headers")
			}
			if f.Attempts != c.attempts || f.AttemptsSource != c.attemptsSource {
				t.Errorf("attempts %d from %q, want %d from %q", f.Attempts, f.AttemptsSource, c.attempts, c.attemptsSource)
			}
			if got := AttemptsOf(h); got != f.Attempts {
				t.Errorf("AttemptsOf = %d, Decode says %d", got, f.Attempts)
			}
			if f.Error != c.err || f.ErrorSource != c.errSource {
				t.Errorf("error %q from %q, want %q from %q", f.Error, f.ErrorSource, c.err, c.errSource)
			}
			if f.ErrorType != c.errType {
				t.Errorf("error type %q, want %q", f.ErrorType, c.errType)
			}
			if !strings.HasPrefix(f.StackTrace, c.stackPrefix) || (c.stackPrefix == "") != (f.StackTrace == "") {
				t.Errorf("stack trace %.60q…, want it to start %q", f.StackTrace, c.stackPrefix)
			}
			if f.FailureKind != c.failureKind {
				t.Errorf("failure kind %q, want %q", f.FailureKind, c.failureKind)
			}
			if f.FirstDeath != c.firstDeath {
				t.Errorf("first death %+v, want %+v", f.FirstDeath, c.firstDeath)
			}
			if !f.LastDeath.empty() {
				t.Errorf("last death %+v: RabbitMQ 3.10 writes no x-last-death-*", f.LastDeath)
			}
			if got := max(countOf(f.DeliveryCount), 0); got != c.deliveryCount {
				t.Errorf("delivery count %d, want %d", got, c.deliveryCount)
			}
			if len(f.Problems) != 0 || f.ReplayCount != 0 || f.ReplayID != "" {
				t.Errorf("problems %q, replay %d %q: want none", f.Problems, f.ReplayCount, f.ReplayID)
			}
			deaths := make([]Death, len(f.Deaths))
			for i, d := range f.Deaths {
				if d.Time.IsZero() {
					t.Errorf("death %d has no time", i)
				}
				d.Time = time.Time{}
				deaths[i] = d
			}
			if len(c.deaths) == 0 {
				deaths = nil
			}
			if !reflect.DeepEqual(deaths, c.deaths) {
				t.Errorf("deaths\n got  %+v\n want %+v", deaths, c.deaths)
			}

			var wantParked time.Time
			switch c.parkedFrom {
			case "":
			case "x-death[0].time":
				wantParked = f.Deaths[0].Time
			default:
				var ok bool
				if wantParked, ok = asTime(h[c.parkedFrom]); !ok {
					t.Fatalf("recording has no usable %s", c.parkedFrom)
				}
			}
			if !f.ParkedAt.Equal(wantParked) {
				t.Errorf("parked at %v, want %v (%s)", f.ParkedAt, wantParked, c.parkedFrom)
			}
			if c.firstFailedAt {
				want, _ := asTime(h[HeaderFirstFailedAt])
				if f.FirstFailedAt.IsZero() || !f.FirstFailedAt.Equal(want) || f.FirstFailedAt.After(f.ParkedAt) {
					t.Errorf("first failed at %v (header %v), parked at %v", f.FirstFailedAt, want, f.ParkedAt)
				}
			} else if !f.FirstFailedAt.IsZero() {
				t.Errorf("first failed at %v, want none", f.FirstFailedAt)
			}
		})
	}
	for _, n := range recordedNames(t) {
		if !seen[n] {
			t.Errorf("recording %s has no case here", n)
		}
	}
}

// TestDecodeNewerBrokerHeaders adds what RabbitMQ 3.13+ and quorum queues
// write (x-last-death-*, x-delivery-count) and what replay writes, to a
// recorded delivery.
func TestDecodeNewerBrokerHeaders(t *testing.T) {
	h := broker.CloneTable(loadRecording(t, "seed2-nack-ttl").Message.Headers)
	replayed := time.Unix(1714564800, 0)
	h[HeaderLastDeathQueue] = "invoice.retry.1s"
	h[HeaderLastDeathReason] = "expired"
	h[HeaderLastDeathExchange] = ""
	h[HeaderDeliveryCount] = int64(4)
	h[HeaderReplayCount] = int32(2)
	h[HeaderReplayedAt] = replayed
	h[HeaderReplayID] = "r-1"
	f := Decode(h)
	if want := (DeathRef{Queue: "invoice.retry.1s", Reason: "expired"}); f.LastDeath != want {
		t.Errorf("last death %+v, want %+v", f.LastDeath, want)
	}
	if countOf(f.DeliveryCount) != 4 || f.ReplayCount != 2 || !f.ReplayedAt.Equal(replayed) || f.ReplayID != "r-1" {
		t.Errorf("delivery count %d, replay %d at %v id %q", countOf(f.DeliveryCount), f.ReplayCount, f.ReplayedAt, f.ReplayID)
	}
}

// countOf is a count the facts may not carry, -1 when absent.
func countOf(p *int64) int64 {
	if p == nil {
		return -1
	}
	return *p
}

// TestDeliveryAndAcquiredCounts: x-delivery-count and RabbitMQ 4.3's
// x-acquired-count are read with the same integer reader, and are nil when
// the message does not carry them (a 0 it carries is kept). No recorded
// 4.3 message carries x-acquired-count (testdata/frameworks holds parking
// lots, which are classic queues), so the headers are RabbitMQ 4.3's as
// broker/versions_test.go measures them after a nack and a reject.
func TestDeliveryAndAcquiredCounts(t *testing.T) {
	cases := []struct {
		name               string
		h                  amqp.Table
		delivery, acquired int64 // -1: absent
	}{
		{"3.x quorum", amqp.Table{HeaderDeliveryCount: int64(2)}, 2, -1},
		{"4.3 quorum", amqp.Table{HeaderDeliveryCount: int64(1), HeaderAcquiredCount: int64(2)}, 1, 2},
		{"4.3 browsed only", amqp.Table{HeaderDeliveryCount: int64(0), HeaderAcquiredCount: int32(5)}, 0, 5},
		{"other integer types", amqp.Table{HeaderDeliveryCount: uint8(3), HeaderAcquiredCount: int16(7)}, 3, 7},
		{"classic queue", amqp.Table{}, -1, -1},
		{"wrong type", amqp.Table{HeaderAcquiredCount: true}, -1, -1},
	}
	for _, c := range cases {
		f := Decode(c.h)
		if d, a := countOf(f.DeliveryCount), countOf(f.AcquiredCount); d != c.delivery || a != c.acquired {
			t.Errorf("%s: x-delivery-count %d, x-acquired-count %d; want %d, %d", c.name, d, a, c.delivery, c.acquired)
		}
	}
}

// TestAttemptsRetryCountTypes: x-retry-count is read whatever integer type a
// producer wrote (handler runs: the count + 1); values that are not a count
// fall back to the death history (here the recorded seed-2 delivery's 3
// rejections and the run after its last delay). RetriesDone, the daemon's
// count, reads the same header without the + 1.
func TestAttemptsRetryCountTypes(t *testing.T) {
	const fromDeaths = "x-death: 3 rejections in invoice.main.queue + 1 after the last delay in invoice.retry.1s"
	cases := []struct {
		name  string
		v     any
		count int64 // the retries the header says; -1: not a count
	}{
		{"int8", int8(5), 5},
		{"uint8", uint8(5), 5},
		{"int16", int16(5), 5},
		{"uint16", uint16(5), 5},
		{"int32", int32(5), 5},
		{"uint32 max", uint32(4294967295), 4294967295},
		{"int64", int64(5), 5},
		{"Go int", 5, 5},
		{"zero", int32(0), 0},
		{"decimal string", "5", 5},
		{"string with spaces", " 5 ", 5},
		{"whole float64", 5.0, 5},
		{"whole float32", float32(5), 5},
		{"negative", int32(-1), -1},
		{"negative string", "-2", -1},
		{"fractional float", 2.5, -1},
		{"NaN", nanFloat(), -1},
		{"huge float", 1e300, -1},
		{"word", "three", -1},
		{"empty string", "", -1},
		{"bool", true, -1},
		{"bytes", []byte("5"), -1},
		{"table", amqp.Table{"n": int32(5)}, -1},
		{"void", nil, -1},
		{"decimal", amqp.Decimal{Scale: 0, Value: 5}, -1},
	}
	base := loadRecording(t, "seed2-nack-ttl").Message.Headers
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := broker.CloneTable(base)
			h[HeaderRetryCount] = c.v
			want, source, retries := int64(4), fromDeaths, int64(3)
			if c.count >= 0 {
				want, source, retries = c.count+1, fmt.Sprintf("x-retry-count %d + 1 (the run that parked it)", c.count), c.count
			}
			f := Decode(h)
			if f.Attempts != want || f.AttemptsSource != source {
				t.Errorf("attempts %d from %q, want %d from %q", f.Attempts, f.AttemptsSource, want, source)
			}
			if got := AttemptsOf(h); got != want {
				t.Errorf("AttemptsOf = %d, want %d", got, want)
			}
			if got := RetriesDone(h); got != retries {
				t.Errorf("RetriesDone = %d, want %d", got, retries)
			}
			// Without a death history to fall back on, a bad count is 0.
			alone := amqp.Table{HeaderRetryCount: c.v}
			want, retries = 0, 0
			if c.count >= 0 {
				want, retries = c.count+1, c.count
			}
			if got := AttemptsOf(alone); got != want {
				t.Errorf("alone: AttemptsOf = %d, want %d", got, want)
			}
			if got := RetriesDone(alone); got != retries {
				t.Errorf("alone: RetriesDone = %d, want %d", got, retries)
			}
		})
	}
}

func nanFloat() float64 { var z float64; return z / z }

func TestAttemptsFromDeaths(t *testing.T) {
	death := func(queue, reason string, count int64) amqp.Table {
		return amqp.Table{"queue": queue, "reason": reason, "count": count, "exchange": "", "routing-keys": []any{queue}}
	}
	cases := []struct {
		name   string
		h      amqp.Table
		want   int64
		source string
	}{
		{"nothing", amqp.Table{}, 0, ""},
		{"nil headers", nil, 0, ""},
		{"only expiries", amqp.Table{HeaderDeath: []any{death("delay", "expired", 4)}}, 0, ""},
		{"first-death queue's rejections", amqp.Table{
			HeaderFirstDeathQueue: "main", HeaderFirstDeathReason: "rejected",
			HeaderDeath: []any{death("other", "rejected", 9), death("main", "rejected", 2)},
		}, 2, "x-death: 2 rejections in main"},
		{"no x-first-death: the largest rejected count", amqp.Table{
			HeaderDeath: []any{death("a", "rejected", 2), death("b", "rejected", 5), death("c", "expired", 7)},
		}, 5, "x-death: 5 rejections in b"},
		{"first-death queue expired: largest rejected elsewhere", amqp.Table{
			HeaderFirstDeathQueue: "delay", HeaderFirstDeathReason: "expired",
			HeaderDeath: []any{death("delay", "expired", 3), death("main", "rejected", 3)},
		}, 4, "x-death: 3 rejections in main + 1 after the last delay in delay"},
		{"newest death a rejection: parked by the broker, no + 1", amqp.Table{
			HeaderFirstDeathQueue: "main", HeaderFirstDeathReason: "rejected",
			HeaderDeath: []any{death("main", "rejected", 3), death("delay", "expired", 2)},
		}, 3, "x-death: 3 rejections in main"},
		{"an expiry in the failed queue itself is no run", amqp.Table{
			HeaderDeath: []any{death("main", "expired", 1), death("main", "rejected", 2)},
		}, 2, "x-death: 2 rejections in main"},
		{"maxlen is no run", amqp.Table{HeaderDeath: []any{death("q", "maxlen", 3)}}, 0, ""},
		{"delivery_limit, limit not known: a lower bound, said so", amqp.Table{HeaderDeath: []any{death("q", "delivery_limit", 1)}},
			1, "x-death delivery_limit in q: at least 1 (its delivery limit is not known)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := Decode(c.h)
			if f.Attempts != c.want || f.AttemptsSource != c.source {
				t.Errorf("attempts %d from %q, want %d from %q", f.Attempts, f.AttemptsSource, c.want, c.source)
			}
			if got := AttemptsOf(c.h); got != c.want {
				t.Errorf("AttemptsOf = %d, want %d", got, c.want)
			}
		})
	}
}

// TestErrorText: the first non-empty error header in the documented order,
// reduced to one line.
func TestErrorText(t *testing.T) {
	long := strings.Repeat("é", MaxErrorLen)
	cases := []struct {
		name      string
		h         amqp.Table
		want, src string
	}{
		{"ours first", amqp.Table{HeaderLastError: "ours", "x-exception-message": "spring", "MT-Fault-Message": "mt"}, "ours", HeaderLastError},
		{"Spring before MassTransit", amqp.Table{"x-exception-message": "spring", "MT-Fault-Message": "mt"}, "spring", "x-exception-message"},
		{"MassTransit before NServiceBus", amqp.Table{"MT-Fault-Message": "mt", "NServiceBus.ExceptionInfo.Message": "nsb"}, "mt", "MT-Fault-Message"},
		{"NServiceBus", amqp.Table{"NServiceBus.ExceptionInfo.Message": "nsb", "rbs2-error-details": "rebus"}, "nsb", "NServiceBus.ExceptionInfo.Message"},
		{"Rebus", amqp.Table{"rbs2-error-details": "rebus\nstack…", "MT-Reason": "fault"}, "rebus", "rbs2-error-details"},
		{"MT-Reason last", amqp.Table{"MT-Reason": "fault"}, "fault", "MT-Reason"},
		{"blank is skipped", amqp.Table{HeaderLastError: "  \n ", "x-exception-message": "spring"}, "spring", "x-exception-message"},
		{"wrong type is skipped", amqp.Table{HeaderLastError: int32(5), "MT-Fault-Message": "mt"}, "mt", "MT-Fault-Message"},
		{"bytes are text", amqp.Table{HeaderLastError: []byte("from bytes")}, "from bytes", HeaderLastError},
		{"first line only", amqp.Table{HeaderLastError: "\n  first line  \r\nsecond"}, "first line", HeaderLastError},
		{"invalid UTF-8 made valid", amqp.Table{HeaderLastError: "bad \xff byte"}, "bad \uFFFD byte", HeaderLastError},
		{"too long is cut on a rune", amqp.Table{HeaderLastError: long}, long[:MaxErrorLen-len("…")-1] + "…", HeaderLastError},
		{"death history when nothing else", amqp.Table{HeaderDeath: []any{amqp.Table{"queue": "q", "reason": "rejected", "count": int64(1)}}}, "dead-lettered: rejected in q", HeaderDeath},
		{"none", amqp.Table{"other": "x"}, "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := Decode(c.h)
			if f.Error != c.want || f.ErrorSource != c.src {
				t.Errorf("error %q from %q, want %q from %q", f.Error, f.ErrorSource, c.want, c.src)
			}
			if len(f.Error) > MaxErrorLen {
				t.Errorf("error is %d bytes", len(f.Error))
			}
		})
	}
}

// TestParkedAt: x-parked-at, then the frameworks' failure times, then the
// newest death.
func TestParkedAt(t *testing.T) {
	ours, mt, nsb, death := time.Unix(1714564800, 0), time.Date(2024, 5, 1, 12, 0, 1, 123456700, time.UTC), time.Date(2024, 5, 1, 12, 0, 2, 123456000, time.UTC), time.Unix(1714564803, 0)
	deaths := []any{amqp.Table{"queue": "q", "reason": "rejected", "count": int64(1), "time": death}}
	cases := []struct {
		name string
		h    amqp.Table
		want time.Time
	}{
		{"x-parked-at", amqp.Table{HeaderParkedAt: ours, "MT-Fault-Timestamp": "2024-05-01T12:00:01.1234567Z", HeaderDeath: deaths}, ours},
		{"x-parked-at as RFC 3339 text", amqp.Table{HeaderParkedAt: "2024-05-01T12:00:00Z"}, ours},
		{"x-parked-at as Unix seconds", amqp.Table{HeaderParkedAt: int64(1714564800)}, ours},
		{"x-parked-at as Unix milliseconds", amqp.Table{HeaderParkedAt: int64(1714564800000)}, ours},
		{"MassTransit", amqp.Table{"MT-Fault-Timestamp": "2024-05-01T12:00:01.1234567Z", HeaderDeath: deaths}, mt},
		{"NServiceBus wire format", amqp.Table{"NServiceBus.TimeOfFailure": "2024-05-01 12:00:02:123456 Z", HeaderDeath: deaths}, nsb},
		{"newest death", amqp.Table{HeaderParkedAt: "not a time", HeaderDeath: deaths}, death},
		{"nothing", amqp.Table{HeaderParkedAt: int32(-5)}, time.Time{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Decode(c.h).ParkedAt; !got.Equal(c.want) {
				t.Errorf("parked at %v, want %v", got, c.want)
			}
		})
	}
}

// TestDecodeNeverPanics feeds Decode headers of every wrong shape.
func TestDecodeNeverPanics(t *testing.T) {
	weird := []any{nil, "", "x\xff", int8(-1), uint32(1), int64(-1 << 63), 1e308, nanFloat(), true, []byte{0xff},
		time.Time{}, amqp.Decimal{}, amqp.Table{}, amqp.Table{"count": "x"}, []any{}, []any{nil, "x", []any{}},
		map[string]any{"queue": 5}, uint64(1 << 63), []string{"a"}, struct{}{}}
	keys := []string{HeaderDeath, HeaderRetryCount, HeaderLastError, HeaderFirstDeathQueue, HeaderFirstDeathReason,
		HeaderDeliveryCount, HeaderParkedAt, HeaderFirstFailedAt, HeaderReplayCount, HeaderReplayedAt, HeaderReplayID,
		HeaderOriginalExchange, HeaderOriginalRoutingKey, "x-original-routingKey", HeaderOriginalQueue,
		"MT-Fault-Timestamp", "MT-Fault-InputAddress", "NServiceBus.FailedQ", "NServiceBus.TimeOfFailure", "x-exception-stacktrace"}
	for _, k := range keys {
		for _, v := range weird {
			h := amqp.Table{k: v}
			_ = Decode(h)
			_ = AttemptsOf(h)
		}
	}
}

// TestDecodeErrorFromXDeathIsOneCleanLine: a message with no error header
// gets its error from x-death, whose strings may hold any bytes: valid
// UTF-8, one line.
func TestDecodeErrorFromXDeathIsOneCleanLine(t *testing.T) {
	f := Decode(amqp.Table{HeaderDeath: []any{amqp.Table{"queue": "src\xff", "reason": "rejected\xfe", "count": int64(1)}}})
	if f.ErrorSource != HeaderDeath || !utf8.ValidString(f.Error) || !strings.HasPrefix(f.Error, "dead-lettered: rejected") {
		t.Errorf("error %q from %s, want a valid UTF-8 line from x-death", f.Error, f.ErrorSource)
	}
}
