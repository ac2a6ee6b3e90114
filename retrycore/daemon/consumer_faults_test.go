//go:build integration

package daemon

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/broker/brokertest"
	"github.com/parkinglot/parkinglot/retrycore"
	"github.com/parkinglot/parkinglot/retrycore/retrytest"
)

func TestRunTwoLoopsShareTheQueueAndCountsHold(t *testing.T) {
	p := retrytest.Pipeline(t, retrycore.QueueClassic, 200*time.Millisecond)
	p.Prefetch, p.Concurrency = 5, 2
	var calls callLog
	handler := func(loopID string) Handler {
		return HandlerFunc(func(_ context.Context, d Delivery) error {
			calls.add(Delivery{MessageID: d.MessageID, Attempt: d.Attempt, Queue: loopID})
			var i int
			_, _ = fmt.Sscanf(string(d.Body), "%d", &i)
			if i%5 == 0 && d.Attempt == 1 {
				return errors.New("first attempt fails")
			}
			time.Sleep(time.Millisecond) // work, so both loops get a share
			return nil
		})
	}
	a := startLoop(t, p, handler("a"), nil)
	b := startLoop(t, p, handler("b"), nil)
	ids := publishN(t, p, "shared", 200, func(i int) string { return fmt.Sprint(i) })

	done := map[string]int{}
	settle := func(l *loop, r Result) {
		if r.Outcome == OutcomeLabelDone {
			done[r.MessageID]++
		}
	}
	for len(done) < len(ids) {
		select {
		case r := <-a.results:
			settle(a, r)
		case r := <-b.results:
			settle(b, r)
		case <-time.After(30 * time.Second):
			t.Fatalf("only %d of %d messages done", len(done), len(ids))
		}
	}
	if err := a.stop(); err != nil {
		t.Fatal(err)
	}
	if err := b.stop(); err != nil {
		t.Fatal(err)
	}
	byLoop := map[string]int{}
	for i, id := range ids {
		seen := calls.of(id)
		if done[id] != 1 {
			t.Fatalf("%s done %d times, want once", id, done[id])
		}
		wantAttempts := 1
		if i%5 == 0 {
			wantAttempts = 2
		}
		if len(seen) != wantAttempts || seen[len(seen)-1].Attempt != wantAttempts {
			t.Fatalf("%s: %d calls, last attempt %d; want %d", id, len(seen), seen[len(seen)-1].Attempt, wantAttempts)
		}
		for _, d := range seen {
			byLoop[d.Queue]++
		}
	}
	if byLoop["a"] == 0 || byLoop["b"] == 0 {
		t.Fatalf("work was not shared: %v", byLoop)
	}
	if got := a.count(OutcomeLabelRetried) + b.count(OutcomeLabelRetried); got != 40 {
		t.Fatalf("retried %v times in total, want 40", got)
	}
	if n := depth(t, p.Main.Queue) + depth(t, p.Error.Queue) + depth(t, p.Tiers()[0].Queue); n != 0 {
		t.Fatalf("%d messages left behind", n)
	}
}

func TestRunTimesOutAHandlerThatNeverReturns(t *testing.T) {
	p := retrytest.Pipeline(t, retrycore.QueueClassic, 200*time.Millisecond)
	p.HandlerTimeout = retrycore.NewDelay(300 * time.Millisecond)
	release := make(chan struct{})
	t.Cleanup(func() { close(release) }) // before goleak looks
	var calls callLog
	l := startLoop(t, p, HandlerFunc(func(_ context.Context, d Delivery) error {
		if calls.add(d) == 1 {
			<-release // ignores its context: never returns while the test runs
		}
		return nil
	}), func(o *RunOptions) { o.AbandonAfter = 100 * time.Millisecond })
	publishN(t, p, "hung", 1, func(int) string { return "x" })
	r1 := l.next()
	var te *TimeoutError
	if r1.Outcome != OutcomeLabelRetried || !errors.As(r1.Err, &te) {
		t.Fatalf("first result %+v, want retried after a timeout", r1)
	}
	if r2 := l.next(); r2.Outcome != OutcomeLabelDone || r2.Attempt != 2 {
		t.Fatalf("second result %+v, want done on attempt 2", r2)
	}
	if got := calls.of("hung-0")[1].Headers[retrycore.HeaderLastError]; got != "handler timed out after 300ms" {
		t.Fatalf("x-last-error = %q", got)
	}
	if l.count(OutcomeLabelRetried) != 1 {
		t.Fatalf("retried counter %v", l.count(OutcomeLabelRetried))
	}
}

func TestRunShutdownMidFlightLosesNothing(t *testing.T) {
	p := retrytest.Pipeline(t, retrycore.QueueClassic, time.Second)
	p.Prefetch, p.Concurrency = 20, 3
	var started, finished atomic.Int32
	l := startLoop(t, p, HandlerFunc(func(context.Context, Delivery) error {
		started.Add(1)
		defer finished.Add(1)
		time.Sleep(30 * time.Millisecond) // in flight when the stop comes
		return nil
	}), nil)
	ids := publishN(t, p, "drain", 60, func(int) string { return "x" })
	got := l.collect(func(all []Result) bool { return len(all) >= 5 })
	if err := l.stop(); err != nil {
		t.Fatalf("Run after shutdown: %v", err)
	}
	for {
		select {
		case r := <-l.results:
			got = append(got, r)
			continue
		default:
		}
		break
	}
	if started.Load() != finished.Load() {
		t.Fatalf("%d handlers started but %d finished: shutdown cut work off", started.Load(), finished.Load())
	}
	done := map[string]bool{}
	requeued := 0
	for _, r := range got {
		switch r.Outcome {
		case OutcomeLabelDone:
			done[r.MessageID] = true
		case OutcomeLabelRequeued:
			requeued++
		default:
			t.Fatalf("unexpected result %+v", r)
		}
	}
	if int(started.Load()) != len(done) {
		t.Fatalf("%d handled but %d acked", started.Load(), len(done))
	}
	ch := brokertest.Channel(t)
	rest := brokertest.Drain(t, ch, p.Main.Queue)
	if len(done)+len(rest) != len(ids) {
		t.Fatalf("%d done + %d still queued != %d published", len(done), len(rest), len(ids))
	}
	for _, d := range rest {
		if done[d.MessageId] {
			t.Fatalf("%s was acked and is still in the queue", d.MessageId)
		}
	}
	if requeued == 0 && len(rest) > 0 && len(done) >= p.Prefetch {
		t.Logf("nothing prefetched was given back explicitly (the channel close requeued it)")
	}
	t.Logf("done %d, given back %d, still queued %d", len(done), requeued, len(rest))
}

func TestRunSurvivesAForcedConnectionCloseAndResumes(t *testing.T) {
	p := retrytest.Pipeline(t, retrycore.QueueClassic, 200*time.Millisecond)
	p.Prefetch, p.Concurrency = 10, 2
	hold := make(chan struct{})
	var holdOnce sync.Once
	t.Cleanup(func() { holdOnce.Do(func() { close(hold) }) })
	var inFlight atomic.Int32
	busy := make(chan struct{}, 10)
	l := startLoop(t, p, HandlerFunc(func(ctx context.Context, d Delivery) error {
		select {
		case <-hold:
		default:
			inFlight.Add(1)
			busy <- struct{}{}
			<-hold // hold both workers until the connections are gone
		}
		return nil
	}), nil)
	ids := publishN(t, p, "before", 10, func(int) string { return "x" })
	<-busy
	<-busy
	m := brokertest.Management(t)
	// The management API lists a new connection only after a few seconds.
	brokertest.Eventually(t, 30*time.Second, 200*time.Millisecond,
		func() bool { return brokertest.CloseConnections(t, m, l.name) > 0 },
		func() string { return "the management API never listed the loop's connections" })
	holdOnce.Do(func() { close(hold) })
	l.waitConsuming(2)
	ids = append(ids, publishN(t, p, "after", 10, func(int) string { return "x" })...)

	done := map[string]int{}
	for len(done) < len(ids) {
		r := l.next()
		if r.Outcome == OutcomeLabelDone {
			done[r.MessageID]++
		}
	}
	if err := l.stop(); err != nil {
		t.Fatal(err)
	}
	if n := depth(t, p.Main.Queue) + depth(t, p.Error.Queue); n != 0 {
		t.Fatalf("%d messages left behind", n)
	}
	if got := metricValue(t, l.metrics.reconnects); got != 1 {
		t.Fatalf("reconnects = %v, want 1 (a stale ack on the new channel would force another)", got)
	}
	for _, id := range ids {
		if done[id] == 0 {
			t.Fatalf("%s lost", id)
		}
	}
}

// failUntilRetried fails a message's first attempt and succeeds afterwards.
func failUntilRetried() Handler {
	return HandlerFunc(func(_ context.Context, d Delivery) error {
		if d.Attempt == 1 {
			return errors.New("first attempt fails")
		}
		return nil
	})
}

// expectGivenBack waits for two failed publishes of the message (each one
// given back and redelivered, never acked), calls repair, and then expects
// the retry to go through and the message to succeed on attempt 2.
func expectGivenBack(t *testing.T, l *loop, p retrycore.Pipeline, want error, repair func()) {
	t.Helper()
	failed := 0
	for failed < 2 {
		r := l.next()
		if r.Outcome != OutcomeLabelPublishFailed || !errors.Is(r.Err, want) || r.Attempt != 1 {
			t.Fatalf("result %+v, want publish_failed with %v on attempt 1", r, want)
		}
		failed++
	}
	repair()
	for {
		r := l.next()
		if r.Outcome == OutcomeLabelPublishFailed {
			continue // given back once more before the repair took
		}
		if r.Outcome != OutcomeLabelRetried {
			t.Fatalf("result %+v, want retried once the retry path works", r)
		}
		break
	}
	if r := l.next(); r.Outcome != OutcomeLabelDone || r.Attempt != 2 {
		t.Fatalf("result %+v, want done on attempt 2", r)
	}
	if err := l.stop(); err != nil {
		t.Fatal(err)
	}
	if got := l.count(OutcomeLabelPublishFailed); got < 2 {
		t.Fatalf("publish_failed counter %v, want >= 2", got)
	}
	if n := depth(t, p.Main.Queue) + depth(t, p.Error.Queue) + depth(t, p.Tiers()[0].Queue); n != 0 {
		t.Fatalf("%d messages left behind", n)
	}
}

func TestRunUnroutableRetryCopyGivesTheMessageBack(t *testing.T) {
	p := retrytest.Pipeline(t, retrycore.QueueClassic, 200*time.Millisecond)
	retrytest.Declare(t, p)
	tier := p.Tiers()[0]
	l := startLoop(t, p, failUntilRetried(), nil)
	ch := brokertest.Channel(t)
	// Without the tier's binding the mandatory copy comes back unroutable.
	// (After the loop started: it declares the binding.)
	if err := ch.QueueUnbind(tier.Queue, tier.RoutingKey, p.Retry.Exchange, nil); err != nil {
		t.Fatal(err)
	}
	publishN(t, p, "unroutable", 1, func(int) string { return "x" })
	expectGivenBack(t, l, p, ErrPublishReturned, func() {
		if err := ch.QueueBind(tier.Queue, tier.RoutingKey, p.Retry.Exchange, false, nil); err != nil {
			t.Fatal(err)
		}
	})
}

func TestRunNackedRetryCopyGivesTheMessageBack(t *testing.T) {
	p := retrytest.Pipeline(t, retrycore.QueueClassic, 200*time.Millisecond)
	retrytest.Declare(t, p)
	tier := p.Tiers()[0]
	m := brokertest.Management(t)
	ctx := context.Background()
	policy := brokertest.Name(t, "full")
	// A full delay queue that rejects publishes: the broker nacks the copy.
	if err := m.PutPolicy(ctx, policy, "^"+regexp.QuoteMeta(tier.Queue)+"$", "queues", 100, map[string]any{"max-length": 0, "overflow": "reject-publish"}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.DeletePolicy(context.Background(), policy) })
	brokertest.Eventually(t, 20*time.Second, 50*time.Millisecond, func() bool {
		q, err := m.Queue(ctx, tier.Queue)
		return err == nil && q.Policy == policy
	}, func() string { return "policy " + policy + " never applied to " + tier.Queue })
	l := startLoop(t, p, failUntilRetried(), nil)
	publishN(t, p, "nacked", 1, func(int) string { return "x" })
	expectGivenBack(t, l, p, broker.ErrNacked, func() {
		if err := m.DeletePolicy(ctx, policy); err != nil {
			t.Fatal(err)
		}
	})
}

func TestRunPipelinedCopiesEachGetTheirOwnReturn(t *testing.T) {
	// One worker with a large prefetch sends many copies before the first
	// confirm arrives; the ones sent to an unbound tier come back among
	// routed ones. Each returned copy's original must be given back, each
	// routed one acked: no return may be credited to another copy.
	p := retrytest.Pipeline(t, retrycore.QueueClassic, time.Hour, 2*time.Hour)
	p.Concurrency, p.Prefetch = 1, 200
	retrytest.Declare(t, p)
	first, second := p.Tiers()[0], p.Tiers()[1]
	l := startLoop(t, p, HandlerFunc(func(context.Context, Delivery) error { return errors.New("not yet") }), nil)
	ch := brokertest.Channel(t)
	if err := ch.QueueUnbind(second.Queue, second.RoutingKey, p.Retry.Exchange, nil); err != nil {
		t.Fatal(err)
	}
	// Even messages are on their first attempt (retry 1: the bound tier),
	// odd ones already retried once (retry 2: the unbound tier).
	const n = 200
	msgs := make([]amqp.Publishing, n)
	for i := range msgs {
		msgs[i] = amqp.Publishing{MessageId: fmt.Sprintf("mix-%d", i), DeliveryMode: amqp.Persistent, Body: []byte("x")}
		if i%2 == 1 {
			msgs[i].Headers = amqp.Table{retrycore.HeaderRetryCount: int32(1)}
		}
	}
	brokertest.PublishMany(t, ch, p.Main.Exchange, p.Main.RoutingKey, msgs)

	retried, returned := map[string]bool{}, map[string]bool{}
	for len(retried) < n/2 || len(returned) < n/2 {
		r := l.next()
		var i int
		if _, err := fmt.Sscanf(r.MessageID, "mix-%d", &i); err != nil {
			t.Fatalf("result for an unknown message: %+v", r)
		}
		switch {
		case i%2 == 0 && r.Outcome == OutcomeLabelRetried && r.Tier == first.Queue:
			if retried[r.MessageID] {
				t.Fatalf("%s retried twice", r.MessageID)
			}
			retried[r.MessageID] = true
		case i%2 == 1 && r.Outcome == OutcomeLabelPublishFailed && errors.Is(r.Err, ErrPublishReturned):
			returned[r.MessageID] = true
		default:
			t.Fatalf("result %+v: want even ids retried to %s, odd ids given back as returned", r, first.Queue)
		}
	}
	if err := l.stop(); err != nil {
		t.Fatal(err)
	}
	inFirst := brokertest.Drain(t, ch, first.Queue)
	if len(inFirst) != n/2 {
		t.Fatalf("the bound tier holds %d copies, want %d", len(inFirst), n/2)
	}
	for _, d := range inFirst {
		if !retried[d.MessageId] {
			t.Fatalf("the bound tier holds %s, which was not retried", d.MessageId)
		}
	}
	// The given-back odd ones are all still in the main queue, unacked
	// by nobody: none lost, none copied.
	if got := brokertest.Depth(t, ch, p.Main.Queue); got != n/2 {
		t.Fatalf("main queue holds %d, want the %d given back", got, n/2)
	}
}
