package retrycore

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker"
)

// frameworksDir holds parking lots recorded from the real frameworks
// (testdata/frameworks/README.md says how each was made).
const frameworksDir = "../testdata/frameworks"

// frameworkRecording is one file of testdata/frameworks: the parked message
// and what the scenario observed while the framework ran.
type frameworkRecording struct {
	Scenario     string      `json:"scenario"`
	Broker       string      `json:"broker"` // "RabbitMQ 3.10.8"
	ParkingLot   string      `json:"parking_lot"`
	ConsumedFrom string      `json:"consumed_from"`
	PublishedTo  Destination `json:"published_to"`
	HandlerRuns  int64       `json:"handler_runs"`
	Error        string      `json:"error"`
	ID           *string     `json:"id"`
	Topology     struct {
		Queues map[string]struct {
			Type            string         `json:"type"`
			Arguments       map[string]any `json:"arguments"`
			Policy          string         `json:"policy"`
			EffectivePolicy map[string]any `json:"effective_policy_definition"`
		} `json:"queues"`
	} `json:"topology"`
	Message broker.Message `json:"message"`
}

func loadFramework(t testing.TB, name string) frameworkRecording {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(frameworksDir, name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var r frameworkRecording
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if r.Scenario != name {
		t.Fatalf("%s says it is scenario %q", name, r.Scenario)
	}
	return r
}

func frameworkNames(t testing.TB) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(frameworksDir, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range files {
		if b := filepath.Base(f); b != "package.json" && b != "package-lock.json" {
			names = append(names, strings.TrimSuffix(b, ".json"))
		}
	}
	if len(names) == 0 {
		t.Fatalf("no recordings in %s", frameworksDir)
	}
	return names
}

// The recorded topology answers as the management API did on that broker.

func (r frameworkRecording) queueInfo(name string) (broker.QueueInfo, bool) {
	q, ok := r.Topology.Queues[name]
	if !ok {
		return broker.QueueInfo{}, false
	}
	args := amqp.Table{}
	for k, v := range q.Arguments {
		if f, ok := v.(float64); ok && f == float64(int64(f)) {
			v = int64(f)
		}
		args[k] = v
	}
	return broker.QueueInfo{Name: name, Type: q.Type, Arguments: args, Policy: q.Policy, EffectivePolicy: q.EffectivePolicy}, true
}

type frameworkQueues struct {
	r     frameworkRecording
	asked []string
}

func (f *frameworkQueues) Queue(_ context.Context, name string) (broker.QueueInfo, error) {
	f.asked = append(f.asked, name)
	q, ok := f.r.queueInfo(name)
	if !ok {
		return q, fmt.Errorf("queue %q: %w", name, broker.ErrNotFound)
	}
	return q, nil
}

func (f *frameworkQueues) QueueArguments(ctx context.Context, name string) (amqp.Table, error) {
	q, err := f.Queue(ctx, name)
	return q.Arguments, err
}

func (r frameworkRecording) server() broker.Version {
	return broker.ParseVersion(strings.TrimPrefix(r.Broker, "RabbitMQ "))
}

// TestFrameworks: on every parking lot a real framework filled, the decoded
// facts say what the framework did — origin, the queue that failed, error,
// attempts (handler runs), id — and a replay's copy gets a fresh budget in
// that framework's own counters and keeps its origin.
func TestFrameworks(t *testing.T) {
	const (
		orders   = "orders / order.created"
		noTrace  = -1 // handler runs the message cannot show (see below)
		fromDeat = HeaderDeath
	)
	cases := map[string]struct {
		origin         string // Destination.String(); "" = published_to
		originSource   string
		attempts       int64 // handler runs, or noTrace
		attemptsSource string
		errSource      string // where the error text comes from; HeaderDeath = the framework wrote none
		reset          []string
	}{
		"amqplib-ttl-loop": {
			originSource: SourceFirstDeath + ` (x-original-* named only the last hop, (default exchange) / orders.process)`,
			attempts:     3, attemptsSource: "x-death: 2 rejections in orders.process + 1 after the last delay in orders.process.retry",
			errSource: "x-exception-message",
			reset:     []string{"x-death", "x-first-death-*"},
		},
		"amqplib-ttl-loop-4.3": { // two deaths in one second: x-death's order decides the + 1
			originSource: SourceFirstDeath + ` (x-original-* named only the last hop, (default exchange) / orders.process)`,
			attempts:     3, attemptsSource: "x-death: 2 rejections in orders.process + 1 after the last delay in orders.process.retry",
			errSource: "x-exception-message",
			reset:     []string{"x-death", "x-first-death-*", "x-last-death-*"},
		},
		"nestjs-golevelup": {
			originSource: SourceFirstDeath,
			// The handler ran twice: Nack(true) requeued the first delivery,
			// which leaves no trace in the message (a classic queue counts
			// no deliveries). One rejection is all it can show.
			attempts: noTrace, attemptsSource: "x-death: 1 rejection in orders.process",
			errSource: fromDeat,
			reset:     []string{"x-death", "x-first-death-*"},
		},
		"kombu-reject": {
			originSource: SourceFirstDeath,
			// As NestJS: message.requeue() leaves no trace.
			attempts: noTrace, attemptsSource: "x-death: 1 rejection in orders.process",
			errSource: fromDeat,
			reset:     []string{"x-death", "x-first-death-*"},
		},
		// The body recordings: one delivery, rejected into the DLX.
		"kombu-msgpack-zlib": {
			originSource: SourceFirstDeath,
			attempts:     1, attemptsSource: "x-death: 1 rejection in orders.process",
			errSource: fromDeat,
			reset:     []string{"x-death", "x-first-death-*"},
		},
		"pika-gzip-json": {
			originSource: SourceFirstDeath,
			attempts:     1, attemptsSource: "x-death: 1 rejection in orders.process",
			errSource: fromDeat,
			reset:     []string{"x-death", "x-first-death-*"},
		},
		"pika-protobuf": {
			originSource: SourceFirstDeath,
			attempts:     1, attemptsSource: "x-death: 1 rejection in orders.process",
			errSource: fromDeat,
			reset:     []string{"x-death", "x-first-death-*"},
		},
		"pika-avro-confluent": {
			originSource: SourceFirstDeath,
			attempts:     1, attemptsSource: "x-death: 1 rejection in orders.process",
			errSource: fromDeat,
			reset:     []string{"x-death", "x-first-death-*"},
		},
		"rascal-republish-forward": {
			originSource: SourceRascal,
			attempts:     4, attemptsSource: "rascal republished 3 + 1",
			errSource: SourceRascalError,
			reset:     []string{`rascal.recovery["orders.process"].republished`, `rascal.recovery["orders.process"].forwarded`},
		},
		"rascal-republish-nack": {
			originSource: SourceRascal,
			attempts:     4, attemptsSource: "rascal republished 3 + 1",
			errSource: SourceRascalError,
			reset:     []string{"x-death", "x-first-death-*", `rascal.recovery["orders.process"].republished`},
		},
		"pika-reject": {
			// orders / order.created are nowhere in the message: the last
			// hop (the consumer's republish to the queue) is all x-death has,
			// and it reaches the queue the framework consumes from.
			origin: "(default exchange) / orders.process", originSource: SourceFirstDeath,
			attempts: 3, attemptsSource: "x-retry-count 2 + 1 (the run that parked it)",
			errSource: fromDeat,
			reset:     []string{"x-death", "x-first-death-*", "x-retry-count"},
		},
		"celery-retries": {
			originSource: SourceFirstDeath,
			attempts:     4, attemptsSource: "celery retries 3 + 1",
			errSource: fromDeat,
			reset:     []string{"x-death", "x-first-death-*", "celery retries"},
		},
		"quorum-delivery-limit": {
			originSource: SourceFirstDeath,
			attempts:     4, attemptsSource: "x-death delivery_limit in orders.process: limit 3 (policy orders-delivery-limit) + 1",
			errSource: fromDeat,
			reset:     []string{"x-death", "x-first-death-*"},
		},
		"quorum-delivery-limit-4.3": {
			originSource: SourceFirstDeath,
			attempts:     4, attemptsSource: "x-death delivery_limit in orders.process: limit 3 (policy orders-delivery-limit) + 1",
			errSource: fromDeat,
			reset:     []string{"x-death", "x-first-death-*", "x-last-death-*"},
		},
	}
	seen := map[string]bool{}
	for _, name := range frameworkNames(t) {
		seen[name] = true
		t.Run(name, func(t *testing.T) {
			c, ok := cases[name]
			if !ok {
				t.Fatalf("recording %s has no case here", name)
			}
			r := loadFramework(t, name)
			h := r.Message.Headers
			ctx := context.Background()
			fq := &frameworkQueues{r: r}

			// Origin and the queue that failed.
			o, err := ResolveOrigin(ctx, h, OriginQuery{ParkingLot: r.ParkingLot, Queues: fq})
			if err != nil {
				t.Fatalf("ResolveOrigin: %v", err)
			}
			want := c.origin
			if want == "" {
				want = r.PublishedTo.String()
			}
			if o.Destination.String() != want || o.Source != c.originSource {
				t.Errorf("origin %s from %q, want %s from %q", o.Destination, o.Source, want, c.originSource)
			}
			if want != orders && r.PublishedTo.String() == orders && name != "pika-reject" {
				t.Errorf("origin %s is not where the producer published (%s)", want, r.PublishedTo)
			}
			if o.Queue != r.ConsumedFrom {
				t.Errorf("failed queue %q, want %q (consumed from)", o.Queue, r.ConsumedFrom)
			}
			noMgmt, err := ResolveOrigin(ctx, h, OriginQuery{ParkingLot: r.ParkingLot})
			if err != nil || noMgmt != o {
				t.Errorf("without the management API: %+v, %v; want %+v", noMgmt, err, o)
			}

			// Facts: attempts (with the delivery limit looked up), error.
			f := DecodeWith(ctx, h, NewDeliveryLimits(fq, r.server()))
			wantAttempts := c.attempts
			if wantAttempts == noTrace {
				wantAttempts = 1
				if r.HandlerRuns <= 1 {
					t.Errorf("handler ran %d times: the case's note no longer holds", r.HandlerRuns)
				}
			} else if wantAttempts != r.HandlerRuns {
				t.Fatalf("case says %d attempts, the recording %d handler runs", wantAttempts, r.HandlerRuns)
			}
			if f.Attempts != wantAttempts || f.AttemptsSource != c.attemptsSource {
				t.Errorf("attempts %d from %q, want %d from %q (handler runs %d)", f.Attempts, f.AttemptsSource, wantAttempts, c.attemptsSource, r.HandlerRuns)
			}
			if f.AttemptsSource == "" || f.AttemptsSource == HeaderRetryCount {
				t.Errorf("attempts source %q: want parkinglot's own label", f.AttemptsSource)
			}
			if !strings.HasPrefix(c.attemptsSource, "x-death delivery_limit") {
				if got := Decode(h); got.Attempts != f.Attempts || got.AttemptsSource != f.AttemptsSource {
					t.Errorf("Decode says %d from %q, DecodeWith %d", got.Attempts, got.AttemptsSource, f.Attempts)
				}
			} else {
				got := Decode(h)
				if got.Attempts != 1 || !strings.Contains(got.AttemptsSource, "at least 1 (its delivery limit is not known)") {
					t.Errorf("without the limit: %d from %q, want a lower bound said so", got.Attempts, got.AttemptsSource)
				}
			}
			if got := AttemptsOf(h); got != Decode(h).Attempts {
				t.Errorf("AttemptsOf %d, Decode %d", got, Decode(h).Attempts)
			}
			if f.ErrorSource != c.errSource {
				t.Errorf("error %q from %q, want it from %q", f.Error, f.ErrorSource, c.errSource)
			}
			if c.errSource != HeaderDeath && f.Error != r.Error {
				t.Errorf("error %q, want %q", f.Error, r.Error)
			}
			if len(f.Problems) != 0 {
				t.Errorf("problems: %q", f.Problems)
			}

			// Id: the one the framework assigned, else a content id.
			if r.ID != nil {
				if got := r.Message.ID(); got != *r.ID {
					t.Errorf("ID() = %q, want the framework's %q", got, *r.ID)
				}
			} else if got := r.Message.ID(); !strings.HasPrefix(got, "sha256:") {
				t.Errorf("ID() = %q, want a content id", got)
			}

			// A replay's copy: a fresh budget, the original untouched, and
			// with the origin recorded (--target queue) it still knows it.
			cp := broker.CloneTable(h)
			reset := ResetBudget(cp)
			if !reflect.DeepEqual(reset, c.reset) {
				t.Errorf("reset %q, want %q", reset, c.reset)
			}
			if !reflect.DeepEqual(h, loadFramework(t, name).Message.Headers) {
				t.Fatal("ResetBudget changed the message it was copied from")
			}
			if n := AttemptsOf(cp); n > 1 {
				t.Errorf("after ResetBudget: %d attempts (%s)", n, Decode(cp).AttemptsSource)
			}
			if n := RetriesDone(cp); n != 0 {
				t.Errorf("after ResetBudget: %d retries done", n)
			}
			if again := ResetBudget(cp); len(again) != 0 {
				t.Errorf("second ResetBudget reset %q", again)
			}
			RecordOrigin(cp, o)
			back, err := ResolveOrigin(ctx, cp, OriginQuery{ParkingLot: r.ConsumedFrom})
			if err != nil || back.Destination != o.Destination || back.Queue != o.Queue || back.Source != SourceOriginalHeaders {
				t.Errorf("copy sent to the queue alone resolves to %+v, %v; want %s from %s", back, err, o.Destination, SourceOriginalHeaders)
			}
		})
	}
	for name := range cases {
		if !seen[name] {
			t.Errorf("case %s has no recording", name)
		}
	}
}

// TestDeathOrderTies: Deaths keeps x-death's head (the entry the broker
// updated last, whatever its time) and gives the rest newest first by
// time; entries of one second, and a rest with an entry lacking a time,
// keep the broker's order.
func TestDeathOrderTies(t *testing.T) {
	at := time.Unix(1764768436, 0)
	entry := func(queue, reason string, ts time.Time) amqp.Table {
		return amqp.Table{"queue": queue, "reason": reason, "count": int64(1), "exchange": "e", "routing-keys": []any{"k"}, "time": ts}
	}
	for _, c := range []struct {
		name  string
		times [3]time.Time
		want  string
	}{
		{"all in one second", [3]time.Time{at, at, at}, "[main.retry main first]"},
		{"newest first already", [3]time.Time{at.Add(time.Second), at, at.Add(-2 * time.Second)}, "[main.retry main first]"},
		{"the rest disagrees with the order", [3]time.Time{at.Add(5 * time.Second), at, at.Add(time.Second)}, "[main.retry first main]"},
		{"the head is kept whatever its time", [3]time.Time{at.Add(-2 * time.Second), at, at.Add(time.Second)}, "[main.retry first main]"},
		{"some without a time", [3]time.Time{at, {}, at.Add(time.Second)}, "[main.retry main first]"},
		{"a tie in the rest", [3]time.Time{at.Add(5 * time.Second), at, at}, "[main.retry main first]"},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := amqp.Table{HeaderDeath: []any{
				entry("main.retry", "expired", c.times[0]),
				entry("main", "rejected", c.times[1]),
				entry("first", "maxlen", c.times[2]),
			}}
			d, _ := Deaths(h)
			var got []string
			for _, x := range d {
				got = append(got, x.Queue)
			}
			if fmt.Sprint(got) != c.want {
				t.Errorf("newest first %v, want %s", got, c.want)
			}
			// Without x-first-death-* the first death is the oldest entry.
			if f := Decode(h); f.FirstDeath.Queue != got[2] || f.Deaths[0].Queue != got[0] {
				t.Errorf("first death %+v, newest %+v", f.FirstDeath, f.Deaths[0])
			}
		})
	}
	// The recorded 4.3 TTL loop put both deaths in one second: the broker's
	// order stands.
	h := loadFramework(t, "amqplib-ttl-loop-4.3").Message.Headers
	d, _ := Deaths(h)
	if len(d) != 2 || !d[0].Time.Equal(d[1].Time) || d[0].Reason != "expired" || d[1].Reason != "rejected" {
		t.Fatalf("recorded tie: %+v", d)
	}
}

// The order the issue saw from a 3.10.8 pipeline with delays [5s, 30s, 5m]:
// x-death came back as 00:10:07, 00:04:37, 00:05:07; newest first is
// 00:10:07, 00:05:07, 00:04:37.
func TestDeathsSortsAShuffledHistoryNewestFirst(t *testing.T) {
	day := time.Date(2026, 12, 4, 0, 0, 0, 0, time.UTC)
	at := func(m, s int) time.Time { return day.Add(time.Duration(m)*time.Minute + time.Duration(s)*time.Second) }
	h := amqp.Table{HeaderDeath: []any{
		amqp.Table{"queue": "orders.retry.5m", "reason": "expired", "count": int64(1), "time": at(10, 7)},
		amqp.Table{"queue": "orders.retry.5s", "reason": "expired", "count": int64(1), "time": at(4, 37)},
		amqp.Table{"queue": "orders.retry.30s", "reason": "expired", "count": int64(1), "time": at(5, 7)},
	}}
	d, problems := Deaths(h)
	var got []string
	for _, x := range d {
		got = append(got, x.Queue+"@"+x.Time.Format("15:04:05"))
	}
	if want := "[orders.retry.5m@00:10:07 orders.retry.30s@00:05:07 orders.retry.5s@00:04:37]"; fmt.Sprint(got) != want || len(problems) != 0 {
		t.Fatalf("deaths %v (problems %q), want %s", got, problems, want)
	}
}

// TestResetBudget: every counter parkinglot reads is reset, what is not a
// counter is kept, and nested tables are replaced, not edited.
func TestResetBudget(t *testing.T) {
	rascal := amqp.Table{
		"originalQueue": "q.a",
		"recovery": amqp.Table{
			"q.a": amqp.Table{"republished": int8(3), "forwarded": int8(1)},
			"q.b": amqp.Table{"republished": int8(1)},
		},
		"redeliveries": int8(2),
		"error":        amqp.Table{"message": "boom"},
	}
	h := amqp.Table{
		HeaderDeath:              []any{amqp.Table{"queue": "q", "reason": "rejected", "count": int64(1)}},
		HeaderFirstDeathQueue:    "q",
		HeaderFirstDeathReason:   "rejected",
		HeaderLastDeathExchange:  "",
		HeaderRetryCount:         int32(3),
		HeaderDeliveryCount:      int64(5),
		HeaderRascal:             rascal,
		"task":                   "orders.charge",
		"id":                     "t-1",
		"retries":                int32(3),
		HeaderLastError:          "boom",
		HeaderOriginalExchange:   "orders",
		HeaderOriginalRoutingKey: "order.created",
		"tenant":                 "acme",
	}
	orig := broker.CloneTable(h)
	cp := broker.CloneTable(h)
	cp[HeaderRascal] = rascal // shared with the original, as a shallow copy would be
	got := ResetBudget(cp)
	want := []string{"x-death", "x-first-death-*", "x-last-death-*", "x-retry-count", "x-delivery-count",
		`rascal.recovery["q.a"].republished`, `rascal.recovery["q.a"].forwarded`, `rascal.recovery["q.b"].republished`,
		"rascal.redeliveries", "celery retries"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("reset\n got  %q\n want %q", got, want)
	}
	if !reflect.DeepEqual(h, orig) {
		t.Errorf("the original's nested rascal table was edited: %v", h[HeaderRascal])
	}
	wantCopy := amqp.Table{
		HeaderRascal:             amqp.Table{"originalQueue": "q.a", "redeliveries": int8(0), "error": amqp.Table{"message": "boom"}},
		"task":                   "orders.charge",
		"id":                     "t-1",
		"retries":                int32(0),
		HeaderLastError:          "boom",
		HeaderOriginalExchange:   "orders",
		HeaderOriginalRoutingKey: "order.created",
		"tenant":                 "acme",
	}
	if !reflect.DeepEqual(cp, wantCopy) {
		t.Errorf("copy\n got  %#v\n want %#v", cp, wantCopy)
	}
	// A "retries" header without Celery's task header is not Celery's.
	other := amqp.Table{"retries": int32(2)}
	if r := ResetBudget(other); len(r) != 0 || other["retries"] != int32(2) {
		t.Errorf("non-Celery retries reset: %q %v", r, other)
	}
	if ResetBudget(nil) != nil || len(ResetBudget(amqp.Table{})) != 0 {
		t.Error("nothing to reset, something reset")
	}
}

// TestRascalAndCeleryShapes: the framework rules on hand-made edges (the
// recorded files above are the real shapes).
func TestRascalAndCeleryShapes(t *testing.T) {
	rascal := func(rec amqp.Table) amqp.Table {
		return amqp.Table{HeaderRascal: amqp.Table{"originalQueue": "q.a", "recovery": rec}}
	}
	cases := []struct {
		name   string
		h      amqp.Table
		want   int64
		source string
	}{
		{"rascal: the original queue's count", rascal(amqp.Table{"q.b": amqp.Table{"republished": int8(9)}, "q.a": amqp.Table{"republished": int8(2)}}), 3, "rascal republished 2 + 1"},
		{"rascal: no entry for the original queue, the largest", rascal(amqp.Table{"q.b": amqp.Table{"republished": int8(5)}, "q.c": amqp.Table{"republished": int8(1)}}), 6, "rascal republished 5 + 1"},
		{"rascal: forwarded only is no republish", rascal(amqp.Table{"q.a": amqp.Table{"forwarded": int8(1)}}), 0, ""},
		{"rascal: wrong types", amqp.Table{HeaderRascal: "x"}, 0, ""},
		{"rascal: recovery not a table", rascal(nil), 0, ""},
		{"celery: retries", amqp.Table{"task": "t", "retries": int32(0)}, 1, "celery retries 0 + 1"},
		{"celery: no task header, not Celery", amqp.Table{"retries": int32(2)}, 0, ""},
		{"x-retry-count before the frameworks", amqp.Table{HeaderRetryCount: int32(1), "task": "t", "retries": int32(5)}, 2, "x-retry-count 1 + 1 (the run that parked it)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := Decode(c.h)
			if f.Attempts != c.want || f.AttemptsSource != c.source {
				t.Errorf("attempts %d from %q, want %d from %q", f.Attempts, f.AttemptsSource, c.want, c.source)
			}
		})
	}
	// rascal's error and code; a plain header wins over the nested one.
	h := amqp.Table{HeaderRascal: amqp.Table{"error": amqp.Table{"message": "boom\nstack", "code": "ECONNREFUSED"}}}
	if f := Decode(h); f.Error != "boom" || f.ErrorSource != SourceRascalError || f.ErrorType != "ECONNREFUSED" {
		t.Errorf("rascal error %q from %q, type %q", f.Error, f.ErrorSource, f.ErrorType)
	}
	h[HeaderLastError] = "ours"
	if f := Decode(h); f.Error != "ours" {
		t.Errorf("error %q, want x-last-error first", f.Error)
	}
}

// TestDeliveryLimitLookups: the limit is looked up once per queue, and a
// failed lookup leaves the lower bound.
func TestDeliveryLimitLookups(t *testing.T) {
	r := loadFramework(t, "quorum-delivery-limit")
	fq := &frameworkQueues{r: r}
	lim := NewDeliveryLimits(fq, r.server())
	for range 3 {
		if f := DecodeWith(context.Background(), r.Message.Headers, lim); f.Attempts != 4 {
			t.Fatalf("attempts %d from %q", f.Attempts, f.AttemptsSource)
		}
	}
	if len(fq.asked) != 1 || fq.asked[0] != "orders.process" {
		t.Errorf("asked %q, want orders.process once", fq.asked)
	}
	gone := amqp.Table{HeaderDeath: []any{amqp.Table{"queue": "gone", "reason": "delivery_limit", "count": int64(2)}}}
	if f := DecodeWith(context.Background(), gone, lim); f.Attempts != 2 || !strings.Contains(f.AttemptsSource, "not known") {
		t.Errorf("failed lookup: %d from %q", f.Attempts, f.AttemptsSource)
	}
	// Two delivery_limit deaths from a queue with limit 3: 2 × 4 runs.
	twice := broker.CloneTable(r.Message.Headers)
	twice[HeaderDeath].([]any)[0].(amqp.Table)["count"] = int64(2)
	if f := DecodeWith(context.Background(), twice, lim); f.Attempts != 8 {
		t.Errorf("two deaths: %d from %q", f.Attempts, f.AttemptsSource)
	}
}
