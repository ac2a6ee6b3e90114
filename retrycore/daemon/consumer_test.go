//go:build integration

package daemon

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/broker/brokertest"
	"github.com/parkinglot/parkinglot/retrycore"
	"github.com/parkinglot/parkinglot/retrycore/retrytest"
)

// loop is one Run under test: its results arrive on a channel, and it is
// stopped (and must return nil) when the test ends.
type loop struct {
	t         *testing.T
	name      string // connection name prefix
	metrics   *Metrics
	results   chan Result
	consuming chan int
	cancel    context.CancelFunc
	done      chan error
	stopped   bool
}

func startLoop(t *testing.T, p retrycore.Pipeline, h Handler, tune func(*RunOptions)) *loop {
	t.Helper()
	l := &loop{
		t:         t,
		name:      brokertest.Name(t, "conn"),
		metrics:   NewMetrics(prometheus.NewRegistry()),
		results:   make(chan Result, 10000),
		consuming: make(chan int, 100),
		done:      make(chan error, 1),
	}
	opts := RunOptions{
		Pipeline:       p,
		Broker:         broker.Options{URL: brokertest.URL(), Name: l.name},
		Metrics:        l.metrics,
		Reconnect:      broker.Backoff{Initial: 50 * time.Millisecond, Max: time.Second},
		PublishTimeout: 10 * time.Second,
		RequeueBackoff: broker.Backoff{Initial: 10 * time.Millisecond, Max: 100 * time.Millisecond},
		OnSettled:      func(r Result) { l.results <- r },
		OnConsuming:    func(n int) { l.consuming <- n },
	}
	if tune != nil {
		tune(&opts)
	}
	ctx, cancel := context.WithCancel(context.Background())
	l.cancel = cancel
	go func() { l.done <- Run(ctx, opts, h) }()
	t.Cleanup(func() {
		if !l.stopped {
			if err := l.stop(); err != nil {
				t.Errorf("Run: %v", err)
			}
		}
	})
	l.waitConsuming(1)
	return l
}

// waitConsuming waits for the loop to (re)start consuming as session n.
func (l *loop) waitConsuming(n int) {
	l.t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		select {
		case got := <-l.consuming:
			if got >= n {
				return
			}
		case err := <-l.done:
			l.t.Fatalf("Run returned before consuming: %v", err)
		case <-timeout:
			l.t.Fatalf("the loop did not start consuming session %d", n)
		}
	}
}

// stop cancels Run and returns what it returned.
func (l *loop) stop() error {
	l.t.Helper()
	l.stopped = true
	l.cancel()
	select {
	case err := <-l.done:
		return err
	case <-time.After(60 * time.Second):
		l.t.Fatal("Run did not return after cancel")
		return nil
	}
}

// next returns the next result, failing the test after a deadline.
func (l *loop) next() Result {
	l.t.Helper()
	select {
	case r := <-l.results:
		return r
	case <-time.After(30 * time.Second):
		l.t.Fatal("no result within 30s")
		return Result{}
	}
}

// collect returns results until pred says stop.
func (l *loop) collect(pred func(all []Result) bool) []Result {
	l.t.Helper()
	var all []Result
	for !pred(all) {
		all = append(all, l.next())
	}
	return all
}

func (l *loop) count(outcome string) float64 {
	return metricValue(l.t, l.metrics.messages.WithLabelValues(outcome))
}

// metricValue reads a counter or gauge.
func metricValue(t *testing.T, m prometheus.Metric) float64 {
	t.Helper()
	var pb dto.Metric
	if err := m.Write(&pb); err != nil {
		t.Fatal(err)
	}
	if c := pb.GetCounter(); c != nil {
		return c.GetValue()
	}
	return pb.GetGauge().GetValue()
}

func publishN(t *testing.T, p retrycore.Pipeline, prefix string, n int, body func(i int) string) []string {
	t.Helper()
	ch := brokertest.Channel(t)
	ids := make([]string, n)
	msgs := make([]amqp.Publishing, n)
	for i := range msgs {
		ids[i] = fmt.Sprintf("%s-%d", prefix, i)
		msgs[i] = amqp.Publishing{MessageId: ids[i], DeliveryMode: amqp.Persistent, Body: []byte(body(i))}
	}
	brokertest.PublishMany(t, ch, p.Main.Exchange, p.Main.RoutingKey, msgs)
	return ids
}

// depths reads the ready count of each queue.
func depth(t *testing.T, queue string) int {
	t.Helper()
	return brokertest.Depth(t, brokertest.Channel(t), queue)
}

// callLog records handler invocations per message id.
type callLog struct {
	mu    sync.Mutex
	calls map[string][]Delivery
}

func (c *callLog) add(d Delivery) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.calls == nil {
		c.calls = map[string][]Delivery{}
	}
	c.calls[d.MessageID] = append(c.calls[d.MessageID], d)
	return len(c.calls[d.MessageID])
}

func (c *callLog) of(id string) []Delivery {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Delivery(nil), c.calls[id]...)
}

func TestRunHappyPathAcksEachMessageOnce(t *testing.T) {
	p := retrytest.Pipeline(t, retrycore.QueueClassic, time.Second)
	var calls callLog
	l := startLoop(t, p, HandlerFunc(func(_ context.Context, d Delivery) error {
		calls.add(d)
		return nil
	}), nil)
	ids := publishN(t, p, "ok", 50, func(int) string { return "fine" })
	results := l.collect(func(all []Result) bool { return len(all) == len(ids) })
	if err := l.stop(); err != nil {
		t.Fatal(err)
	}
	for _, r := range results {
		if r.Outcome != OutcomeLabelDone || r.Attempt != 1 {
			t.Fatalf("result %+v, want done on attempt 1", r)
		}
	}
	for _, id := range ids {
		if n := len(calls.of(id)); n != 1 {
			t.Fatalf("%s handled %d times, want once", id, n)
		}
	}
	// After the loop closed its channel, anything not acked would be back.
	if n := depth(t, p.Main.Queue); n != 0 {
		t.Fatalf("main queue holds %d messages after a clean run, want 0 (all acked)", n)
	}
	if n := depth(t, p.Tiers()[0].Queue) + depth(t, p.Error.Queue); n != 0 {
		t.Fatalf("%d messages went to the retry or error tier", n)
	}
	if got := l.count(OutcomeLabelDone); got != 50 {
		t.Fatalf("parkinglot_messages_total{outcome=done} = %v, want 50", got)
	}
}

// TestRunGivesAPipelineBuiltInGoItsDefaults: a pipeline built in Go
// without a handler timeout gets the 30s default, as a loaded one does:
// the handler's context is not expired, and the message is done.
func TestRunGivesAPipelineBuiltInGoItsDefaults(t *testing.T) {
	p := retrytest.Pipeline(t, retrycore.QueueClassic, time.Second)
	p.HandlerTimeout = retrycore.Delay{}
	l := startLoop(t, p, HandlerFunc(func(ctx context.Context, _ Delivery) error {
		if dl, ok := ctx.Deadline(); !ok || time.Until(dl) < 20*time.Second {
			return fmt.Errorf("handler deadline %v (set %v), want about 30s from now", time.Until(dl), ok)
		}
		return ctx.Err()
	}), nil)
	publishN(t, p, "default", 1, func(int) string { return "fine" })
	if r := l.next(); r.Outcome != OutcomeLabelDone {
		t.Fatalf("result %+v, want done", r)
	}
}

func TestRunTransientFailureRetriesThroughTheDelayTierThenSucceeds(t *testing.T) {
	p := retrytest.Pipeline(t, retrycore.QueueClassic, 200*time.Millisecond)
	var calls callLog
	l := startLoop(t, p, HandlerFunc(func(_ context.Context, d Delivery) error {
		if calls.add(d) < 3 {
			return fmt.Errorf("db down on attempt %d", d.Attempt)
		}
		return nil
	}), nil)
	publishN(t, p, "flaky", 1, func(int) string { return "x" })
	var outcomes []string
	for _, r := range l.collect(func(all []Result) bool { return len(all) == 3 }) {
		outcomes = append(outcomes, r.Outcome+"@"+fmt.Sprint(r.Attempt))
		if r.Outcome == OutcomeLabelRetried && r.Tier != p.Tiers()[0].Queue {
			t.Fatalf("retried to %q, want the only tier %s", r.Tier, p.Tiers()[0].Queue)
		}
	}
	if fmt.Sprint(outcomes) != "[retried@1 retried@2 done@3]" {
		t.Fatalf("outcomes %v", outcomes)
	}
	seen := calls.of("flaky-0")
	// Each retry came back from the delay queue (dead-lettered to the main
	// exchange) carrying the contract headers of the previous failure.
	for i, d := range seen[1:] {
		n := int64(i + 1)
		if got := retrycore.RetriesDone(d.Headers); got != n {
			t.Fatalf("attempt %d: x-retry-count %v", d.Attempt, d.Headers[retrycore.HeaderRetryCount])
		}
		if d.Headers[retrycore.HeaderLastError] != fmt.Sprintf("db down on attempt %d", n) || d.Exchange != p.Main.Exchange || d.RoutingKey != p.Main.RoutingKey {
			t.Fatalf("attempt %d: from %s/%s, headers %v", d.Attempt, d.Exchange, d.RoutingKey, d.Headers)
		}
		deaths, _ := retrycore.Deaths(d.Headers)
		if len(deaths) == 0 || deaths[0].Queue != p.Tiers()[0].Queue || deaths[0].Reason != "expired" {
			t.Fatalf("attempt %d did not come through the delay queue: %+v", d.Attempt, deaths)
		}
	}
	if err := l.stop(); err != nil {
		t.Fatal(err)
	}
	if n := depth(t, p.Main.Queue) + depth(t, p.Error.Queue) + depth(t, p.Tiers()[0].Queue); n != 0 {
		t.Fatalf("%d messages left behind, want 0", n)
	}
}

func TestRunRetriesExhaustedParksAfterExactlyMaxRetries(t *testing.T) {
	p := retrytest.Pipeline(t, retrycore.QueueClassic, 200*time.Millisecond)
	var calls callLog
	l := startLoop(t, p, HandlerFunc(func(_ context.Context, d Delivery) error {
		calls.add(d)
		return errors.New("transfer 42 failed: db down\nstack trace line")
	}), nil)
	before := time.Now().Truncate(time.Second)
	ch := brokertest.Channel(t)
	brokertest.Publish(t, ch, p.Main.Exchange, p.Main.RoutingKey, amqp.Publishing{
		MessageId: "doomed", ContentType: "application/json", CorrelationId: "corr-1", Expiration: "600000",
		Headers: amqp.Table{"tenant": "acme"}, Body: []byte(`{"amount":42}`),
	})
	results := l.collect(func(all []Result) bool { return len(all) > 0 && all[len(all)-1].Outcome == OutcomeLabelParked })
	if len(results) != 4 || len(calls.of("doomed")) != 4 {
		t.Fatalf("%d results / %d handler calls, want 4 (first attempt + max_retries=3): %+v", len(results), len(calls.of("doomed")), results)
	}
	if last := results[3]; last.Kind != retrycore.KindRetriesExhausted || last.Attempt != 4 {
		t.Fatalf("last result %+v", last)
	}
	if err := l.stop(); err != nil {
		t.Fatal(err)
	}
	parked := brokertest.Drain(t, ch, p.Error.Queue)
	if len(parked) != 1 {
		t.Fatalf("parking lot holds %d messages, want 1", len(parked))
	}
	m := parked[0]
	h := m.Headers
	if h[retrycore.HeaderRetryCount] != int32(3) {
		t.Errorf("x-retry-count = %#v, want int32(3)", h[retrycore.HeaderRetryCount])
	}
	for k, want := range map[string]any{
		retrycore.HeaderLastError:          "transfer 42 failed: db down",
		retrycore.HeaderOriginalExchange:   p.Main.Exchange,
		retrycore.HeaderOriginalRoutingKey: p.Main.RoutingKey,
		retrycore.HeaderOriginalQueue:      p.Main.Queue,
		retrycore.HeaderFailureKind:        retrycore.KindRetriesExhausted,
		"tenant":                           "acme",
	} {
		if h[k] != want {
			t.Errorf("%s = %#v, want %#v", k, h[k], want)
		}
	}
	first, ok1 := h[retrycore.HeaderFirstFailedAt].(time.Time)
	parkedAt, ok2 := h[retrycore.HeaderParkedAt].(time.Time)
	if !ok1 || !ok2 || first.Before(before) || parkedAt.Before(first) || parkedAt.After(time.Now()) {
		t.Errorf("x-first-failed-at %v, x-parked-at %v (want timestamps, first <= parked, after %v)", h[retrycore.HeaderFirstFailedAt], h[retrycore.HeaderParkedAt], before)
	}
	if m.MessageId != "doomed" || m.ContentType != "application/json" || m.CorrelationId != "corr-1" || string(m.Body) != `{"amount":42}` {
		t.Errorf("properties or body changed: %+v", m)
	}
	if m.Expiration != "" {
		t.Errorf("expiration %q kept on the parked copy", m.Expiration)
	}
	if f := retrycore.Decode(h); f.Attempts != 4 || f.FailureKind != retrycore.KindRetriesExhausted { // the 4 handler calls above
		t.Errorf("Decode: attempts %d, kind %q", f.Attempts, f.FailureKind)
	}
	if n := depth(t, p.Main.Queue) + depth(t, p.Tiers()[0].Queue); n != 0 {
		t.Fatalf("%d copies left outside the parking lot", n)
	}
}

func TestRunPoisonParksOnFirstFailureWithoutTouchingTheRetryExchange(t *testing.T) {
	p := retrytest.Pipeline(t, retrycore.QueueClassic, time.Minute)
	retrytest.Declare(t, p)
	// A probe queue sees anything published to the retry exchange.
	ch := brokertest.Channel(t)
	probe := brokertest.Name(t, "probe")
	brokertest.DeclareQueue(t, ch, probe, nil)
	if err := ch.QueueBind(probe, p.Tiers()[0].RoutingKey, p.Retry.Exchange, false, nil); err != nil {
		t.Fatal(err)
	}
	var calls atomic.Int32
	l := startLoop(t, p, HandlerFunc(func(_ context.Context, d Delivery) error {
		calls.Add(1)
		return Permanent(fmt.Errorf("cannot parse %s", d.Body))
	}), nil)
	publishN(t, p, "poison", 1, func(int) string { return "garbage" })
	r := l.next()
	if r.Outcome != OutcomeLabelParked || r.Kind != retrycore.KindPermanent || r.Attempt != 1 {
		t.Fatalf("result %+v, want parked as permanent on attempt 1", r)
	}
	if err := l.stop(); err != nil {
		t.Fatal(err)
	}
	if calls.Load() != 1 {
		t.Fatalf("handler called %d times, want 1", calls.Load())
	}
	if n := depth(t, probe) + depth(t, p.Tiers()[0].Queue); n != 0 {
		t.Fatalf("%d messages reached the retry exchange, want 0", n)
	}
	parked := brokertest.Drain(t, ch, p.Error.Queue)
	if len(parked) != 1 || parked[0].Headers[retrycore.HeaderFailureKind] != retrycore.KindPermanent || parked[0].Headers[retrycore.HeaderRetryCount] != int32(0) ||
		parked[0].Headers[retrycore.HeaderLastError] != "cannot parse garbage" {
		t.Fatalf("parked %d: %+v", len(parked), parked)
	}
}

func TestRunSelectsTheDelayTierByRetryNumber(t *testing.T) {
	// Retry 1 goes to the short tier and comes back; retry 2 goes to the
	// hour-long tier, where the test finds it waiting.
	p := retrytest.Pipeline(t, retrycore.QueueClassic, 200*time.Millisecond, time.Hour)
	l := startLoop(t, p, HandlerFunc(func(context.Context, Delivery) error { return errors.New("not yet") }), nil)
	publishN(t, p, "tiered", 1, func(int) string { return "x" })
	short, long := p.Tiers()[0].Queue, p.Tiers()[1].Queue
	r1, r2 := l.next(), l.next()
	if r1.Outcome != OutcomeLabelRetried || r1.Tier != short || r2.Outcome != OutcomeLabelRetried || r2.Tier != long {
		t.Fatalf("results %+v / %+v, want retry 1 to %s and retry 2 to %s", r1, r2, short, long)
	}
	if err := l.stop(); err != nil {
		t.Fatal(err)
	}
	ch := brokertest.Channel(t)
	if n := brokertest.Depth(t, ch, short); n != 0 {
		t.Fatalf("short tier holds %d", n)
	}
	held := brokertest.Drain(t, ch, long)
	if len(held) != 1 || held[0].Headers[retrycore.HeaderRetryCount] != int32(2) {
		t.Fatalf("long tier holds %d messages: %+v", len(held), held)
	}
	deaths, _ := retrycore.Deaths(held[0].Headers)
	if len(deaths) != 1 || deaths[0].Queue != short || deaths[0].Reason != "expired" {
		t.Fatalf("the copy in the long tier should have passed through the short one once: %+v", deaths)
	}
}

func TestRunQuorumPipelineRetriesThenParks(t *testing.T) {
	p := retrytest.Pipeline(t, retrycore.QueueQuorum, 200*time.Millisecond)
	p.MaxRetries = 2
	l := startLoop(t, p, HandlerFunc(func(context.Context, Delivery) error { return errors.New("still broken") }), nil)
	publishN(t, p, "quorum", 1, func(int) string { return "x" })
	var outcomes []string
	for _, r := range l.collect(func(all []Result) bool { return len(all) == 3 }) {
		outcomes = append(outcomes, r.Outcome)
	}
	if fmt.Sprint(outcomes) != "[retried retried parked]" {
		t.Fatalf("outcomes %v", outcomes)
	}
	if err := l.stop(); err != nil {
		t.Fatal(err)
	}
	parked := brokertest.Drain(t, brokertest.Channel(t), p.Error.Queue)
	if len(parked) != 1 || parked[0].Headers[retrycore.HeaderRetryCount] != int32(2) || parked[0].Headers[retrycore.HeaderFailureKind] != retrycore.KindRetriesExhausted {
		t.Fatalf("parked: %+v", parked)
	}
}
