//go:build integration

package daemon

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/broker/brokertest"
	"github.com/parkinglot/parkinglot/broker/brokertest/benchtest"
	"github.com/parkinglot/parkinglot/retrycore"
	"github.com/parkinglot/parkinglot/retrycore/retrytest"
)

// The daemon benchmarks: Run with a no-op Go handler against the raw
// amqp091-go loops, measured in the same run.

const (
	benchPrefetch = 500
	// benchConcurrency is the daemon's workers in the benchmarks
	// ($PARKINGLOT_BENCH_CONCURRENCY overrides it).
	benchConcurrency = 16
)

// benchPipeline is a pipeline with unique names, prefetch 500 and one
// delay tier of delay, deleted when the benchmark ends: classic, or quorum
// with $PARKINGLOT_BENCH_QUEUE_TYPE=quorum (make bench-cluster), the raw
// baselines then consuming the same quorum queues.
func benchPipeline(b *testing.B, delay time.Duration) retrycore.Pipeline {
	b.Helper()
	concurrency := benchConcurrency
	if s := os.Getenv("PARKINGLOT_BENCH_CONCURRENCY"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			b.Fatalf("PARKINGLOT_BENCH_CONCURRENCY=%q: want a positive number", s)
		}
		concurrency = n
	}
	name := brokertest.Name(b, "")
	p := retrycore.Pipeline{
		Name:           name,
		QueueType:      benchtest.BenchQueueType(b),
		Main:           retrycore.MainPath{Exchange: name + ".main", Queue: name + ".main.queue", RoutingKey: "work"},
		Retry:          retrycore.RetryPath{Exchange: name + ".retry", RoutingKey: "retry", Delays: []retrycore.Delay{retrycore.NewDelay(delay)}},
		Error:          retrycore.ErrorPath{Exchange: name + ".error", Queue: name + ".dlq", RoutingKey: "error"},
		MaxRetries:     3,
		Prefetch:       benchPrefetch,
		Concurrency:    concurrency,
		HandlerTimeout: retrycore.NewDelay(30 * time.Second),
	}
	if err := p.Validate(); err != nil {
		b.Fatal(err)
	}
	for _, q := range append([]string{p.Main.Queue, p.Error.Queue}, retrytest.TierQueues(p)...) {
		brokertest.DeleteQueueAtEnd(b, q)
	}
	for _, ex := range []string{p.Main.Exchange, p.Retry.Exchange, p.Error.Exchange} {
		brokertest.DeleteExchangeAtEnd(b, ex)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := retrycore.DeclarePipeline(ctx, broker.Options{URL: brokertest.URL(), Name: "parkinglot-bench declare"}, nil, p); err != nil {
		b.Fatal(err)
	}
	return p
}

// benchMessage is a 1 KiB persistent message as a producer sends it.
func benchMessage(i int) amqp.Publishing {
	return amqp.Publishing{
		MessageId:    fmt.Sprintf("bench-%07d", i),
		ContentType:  "application/json",
		DeliveryMode: amqp.Persistent,
		Body:         benchtest.Body(i, 1024),
		Headers:      amqp.Table{"tenant": "acme"},
	}
}

// runUntil runs the daemon on p with h until want messages were done, and
// returns how long that took from the call to Run (dial and declare
// included). It stops the daemon, and fails the benchmark if any message
// ended otherwise than done or retried.
func runUntil(b *testing.B, p retrycore.Pipeline, h Handler, want int) time.Duration {
	b.Helper()
	var done, bad atomic.Int64
	var firstBad atomic.Value
	finished := make(chan struct{})
	opts := RunOptions{
		Pipeline: p,
		Broker:   broker.Options{URL: brokertest.URL(), Name: "parkinglot-bench daemon " + p.Name},
		OnSettled: func(r Result) {
			switch r.Outcome {
			case OutcomeLabelDone:
				if done.Add(1) == int64(want) {
					close(finished)
				}
			case OutcomeLabelRetried:
			default:
				if bad.Add(1) == 1 {
					firstBad.Store(fmt.Sprintf("%s: %s (%v)", r.MessageID, r.Outcome, r.Err))
				}
			}
		},
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ran := make(chan error, 1)
	start := time.Now()
	go func() { ran <- Run(ctx, opts, h) }()
	select {
	case <-finished:
	case err := <-ran:
		b.Fatalf("Run returned early: %v", err)
	case <-time.After(20 * time.Minute):
		b.Fatalf("daemon: %d of %d done after 20 minutes", done.Load(), want)
	}
	took := time.Since(start)
	cancel()
	if err := <-ran; err != nil {
		b.Fatalf("Run: %v", err)
	}
	if n := bad.Load(); n > 0 {
		b.Fatalf("%d messages not done, first %v", n, firstBad.Load())
	}
	return took
}

// BenchmarkDaemonHappyPath runs 100,000 messages through Run
// with a no-op handler (every message done on its first attempt),
// alternated round by round with a raw consume + ack loop (amqp091-go,
// single acks) at the same prefetch. Target: ≥ 0.9× the raw loop.
func BenchmarkDaemonHappyPath(b *testing.B) {
	n := benchtest.BenchCount(b, 100_000)
	rounds := benchtest.BenchRounds(b)
	for iter := 0; iter < b.N; iter++ {
		b.StopTimer()
		p := benchPipeline(b, time.Second)
		queues := benchtest.DescribeBenchQueue(b, p.Main.Queue)
		noop := HandlerFunc(func(context.Context, Delivery) error { return nil })
		// emptied waits until the main queue is empty. On quorum queues,
		// deliveries acked just before the channel closed may come back
		// (see benchtest.Returned): counted for a note, then purged.
		var returned [2][]int
		ch := brokertest.Channel(b)
		emptied := func(side int) {
			if queues.Type == retrycore.QueueQuorum {
				returned[side] = append(returned[side], benchtest.Returned(b, ch, p.Main.Queue, time.Second))
				return
			}
			brokertest.WaitDepth(b, p.Main.Queue, 0, time.Minute)
		}
		daemonRun := func(int) float64 {
			benchtest.ConfirmedPublish(b, p.Main.Exchange, p.Main.RoutingKey, n, benchtest.BenchWindow, benchMessage)
			b.StartTimer()
			took := runUntil(b, p, noop, n)
			b.StopTimer()
			emptied(0)
			return benchtest.Rate(n, took)
		}
		rawRun := func(int) float64 {
			benchtest.ConfirmedPublish(b, p.Main.Exchange, p.Main.RoutingKey, n, benchtest.BenchWindow, benchMessage)
			raw := benchtest.RawConsumeAck(b, p.Main.Queue, n, p.Prefetch)
			emptied(1)
			return benchtest.Rate(n, raw)
		}
		r := benchtest.Alternate(b, rounds, daemonRun, rawRun)
		benchtest.BenchLine(b, queues.Name("daemon-happy-vs-raw-consume-ack", fmt.Sprintf("prefetch %d", p.Prefetch), fmt.Sprintf("concurrency %d", p.Concurrency)), n, r, "")
		benchtest.BenchNote("happy path: daemon %s msg/s; raw consume + ack %s msg/s", benchtest.RoundFigures(r.Measured), benchtest.RoundFigures(r.Baseline))
		queues.Note("happy path: the pipeline")
		if queues.Type == retrycore.QueueQuorum {
			benchtest.BenchNote("happy path: acked messages back in the main queue after the channel closed (redelivered, then purged): daemon %v, raw consume + ack %v",
				returned[0], returned[1])
		}
	}
}

// errFirstAttempt is the benchmark handler's transient failure.
var errFirstAttempt = errors.New("first attempt fails")

// BenchmarkDaemonRetryPath runs 100,000 messages that each fail once and
// then succeed: attempt 1 fails, the daemon publishes the retry copy to
// the delay tier (1ms TTL) and acks after its confirm, the broker dead-
// letters it back to the main queue, attempt 2 succeeds. msg/s counts
// messages completed (done on attempt 2) per second, end to end. It is
// alternated round by round with three baselines: the same flow written
// with amqp091-go alone on the same topology, each copy carrying the
// headers the daemon's copy carries (the raw retry loop, the like-for-like
// baseline; target ≥ 0.9×); the same loop with one header of its own (what
// the header contract costs the broker; information); and the raw
// confirmed publish of the same messages (window 512; each completed
// message costs one such publish besides two deliveries, two acks and a
// dead-lettering; information).
func BenchmarkDaemonRetryPath(b *testing.B) {
	n := benchtest.BenchCount(b, 100_000)
	rounds := benchtest.BenchRounds(b)
	ch := brokertest.Channel(b)
	for iter := 0; iter < b.N; iter++ {
		b.StopTimer()
		p := benchPipeline(b, time.Millisecond)
		emptied := func(queues ...string) {
			for _, q := range append(queues, retrytest.TierQueues(p)...) {
				brokertest.WaitDepth(b, q, 0, time.Minute)
			}
		}
		flaky := HandlerFunc(func(_ context.Context, d Delivery) error {
			if d.Attempt == 1 {
				return errFirstAttempt
			}
			return nil
		})
		daemonRun := func(int) float64 {
			benchtest.ConfirmedPublish(b, p.Main.Exchange, p.Main.RoutingKey, n, benchtest.BenchWindow, benchMessage)
			b.StartTimer()
			took := runUntil(b, p, flaky, n)
			b.StopTimer()
			emptied(p.Main.Queue, p.Error.Queue)
			return benchtest.Rate(n, took)
		}
		// The headers the daemon's first retry copy adds, built once: the
		// raw loop sends the same table with every copy.
		contract := retrycore.RetryHeaders(nil, retrycore.Failure{Exchange: p.Main.Exchange, RoutingKey: p.Main.RoutingKey, Queue: p.Main.Queue, Err: errFirstAttempt.Error(), DeliveryMode: benchMessage(0).DeliveryMode}, 1, time.Now())
		rawLoop := func(retriedHeader string, retried amqp.Table) func(int) float64 {
			return func(int) float64 {
				benchtest.ConfirmedPublish(b, p.Main.Exchange, p.Main.RoutingKey, n, benchtest.BenchWindow, benchMessage)
				took := benchtest.RawRetryLoop(b, p.Main.Queue, p.Retry.Exchange, p.Tier(1).RoutingKey, retriedHeader, retried, n, p.Prefetch, benchtest.BenchWindow)
				emptied(p.Main.Queue)
				return benchtest.Rate(n, took)
			}
		}
		publishRun := func(int) float64 {
			took := benchtest.ConfirmedPublish(b, p.Main.Exchange, p.Main.RoutingKey, n, benchtest.BenchWindow, benchMessage)
			brokertest.Purge(b, ch, p.Main.Queue)
			return benchtest.Rate(n, took)
		}
		queues := benchtest.DescribeBenchQueue(b, p.Main.Queue)
		r := benchtest.AlternateAll(b, rounds, daemonRun, rawLoop(retrycore.HeaderRetryCount, contract), rawLoop("x-bench-retried", nil), publishRun)
		benchtest.BenchLine(b, queues.Name("daemon-retry-vs-raw-retry-loop", fmt.Sprintf("the same headers, window %d, prefetch %d; daemon concurrency %d", benchtest.BenchWindow, p.Prefetch, p.Concurrency)),
			n, r[0], "")
		benchtest.BenchLine(b, queues.Name("daemon-retry-vs-one-header-raw-retry-loop", fmt.Sprintf("window %d; information, no target", benchtest.BenchWindow)),
			n, r[1], "")
		benchtest.BenchLine(b, queues.Name("daemon-retry-vs-raw-confirmed-publish", fmt.Sprintf("window %d; information, no target", benchtest.BenchWindow)),
			n, r[2], "")
		benchtest.BenchNote("retry path: daemon %s msg/s; raw retry loop, the same headers %s msg/s; one header %s msg/s; raw confirmed publish %s msg/s",
			benchtest.RoundFigures(r[0].Measured), benchtest.RoundFigures(r[0].Baseline), benchtest.RoundFigures(r[1].Baseline), benchtest.RoundFigures(r[2].Baseline))
		queues.Note("retry path: the pipeline's")
	}
}
