// Package demo is `parkinglot demo`: it declares a small payment pipeline,
// publishes a realistic mix of good, flaky and poison payments, runs the
// embedded retry consumer (daemon.Run) with a built-in Go handler until
// the parking lot holds what it should, and stops — leaving a parking lot
// worth opening in the TUI.
package demo

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/retrycore"
	"github.com/parkinglot/parkinglot/retrycore/daemon"
)

// DefaultName is the demo pipeline's name.
const DefaultName = "demo-payments"

// Options say where and how the demo runs.
type Options struct {
	Name       string // pipeline name (and queue/exchange prefix); default DefaultName
	QueueType  string // classic (default) or quorum
	Broker     broker.Options
	Management *broker.Management // optional: lets the declare compare arguments
	Logger     *slog.Logger       // the consumer's log; nil: discard
	Progress   Progress           // hears each step; nil: quiet
	// Timeout bounds the wait for the parking lot to fill; default 90s.
	Timeout time.Duration
}

func (o *Options) defaults() {
	if o.Name == "" {
		o.Name = DefaultName
	}
	if o.QueueType == "" {
		o.QueueType = retrycore.QueueClassic
	}
	if o.Timeout <= 0 {
		o.Timeout = 90 * time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Progress == nil {
		o.Progress = quiet{}
	}
	if o.Broker.Name == "" {
		o.Broker.Name = "parkinglot demo"
	}
}

// NewPipeline is the demo's pipeline: short delays (1s, 2s) so the parking
// lot fills in seconds, max_retries 3.
func NewPipeline(name, queueType string) retrycore.Pipeline {
	p := retrycore.Pipeline{
		Name:      name,
		QueueType: queueType,
		Main:      retrycore.MainPath{Exchange: name + ".main", Queue: name + ".main.queue", RoutingKey: "payment.execute"},
		Retry: retrycore.RetryPath{Exchange: name + ".retry", RoutingKey: "payment.retry",
			Delays: []retrycore.Delay{retrycore.NewDelay(time.Second), retrycore.NewDelay(2 * time.Second)}},
		Error:          retrycore.ErrorPath{Exchange: name + ".error", Queue: name + ".error.dlq", RoutingKey: "payment.error"},
		MaxRetries:     3,
		Prefetch:       20,
		Concurrency:    4,
		HandlerTimeout: retrycore.NewDelay(5 * time.Second),
	}
	p.SetDefaults()
	return p
}

// Summary is what a seed did.
type Summary struct {
	Pipeline  retrycore.Pipeline
	Published int
	// Expected is how many of the published messages end up parked.
	Expected int
	// Before and After are the parking lot's depth around the run; an
	// earlier demo run's messages stay (Clean removes them).
	Before, After int
	Outcomes      map[string]int // consumer outcomes: done, retried, parked, …
	Elapsed       time.Duration
}

// ParkingLot is the queue to open in the TUI.
func (s Summary) ParkingLot() string { return s.Pipeline.Error.Queue }

// Progress hears each step of a seed or a clean, for the caller to tell
// a person.
type Progress interface {
	// Declared: the pipeline's topology is declared (with the declare's
	// warnings).
	Declared(p retrycore.Pipeline, warnings []string)
	// Earlier: the parking lot already held n messages of an earlier run.
	Earlier(n int)
	// Published: n payments are published, of which parked will be parked;
	// the consumer starts.
	Published(n, parked int)
	// Filled: the parking lot holds depth messages; the consumer stopped.
	Filled(queue string, depth int)
	// Deleted: Clean removed a queue (with its messages) or an exchange
	// (messages -1).
	Deleted(kind, name string, messages int)
}

type quiet struct{}

func (quiet) Declared(retrycore.Pipeline, []string) {}
func (quiet) Earlier(int)                           {}
func (quiet) Published(int, int)                    {}
func (quiet) Filled(string, int)                    {}
func (quiet) Deleted(string, string, int)           {}

// Seed declares the pipeline, publishes the mix, runs the consumer until
// the parking lot holds the expected messages (and the main and delay
// queues are empty), then stops the consumer.
func Seed(ctx context.Context, o Options) (Summary, error) {
	o.defaults()
	start := time.Now()
	p := NewPipeline(o.Name, o.QueueType)
	sum := Summary{Pipeline: p, Outcomes: map[string]int{}}
	if err := p.Validate(); err != nil {
		return sum, err
	}
	rep, err := retrycore.DeclarePipeline(ctx, o.Broker, o.Management, p)
	if err != nil {
		return sum, fmt.Errorf("demo: declare: %w", err)
	}
	o.Progress.Declared(p, rep.Warnings)

	conn, err := broker.Dial(ctx, o.Broker)
	if err != nil {
		return sum, err
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		return sum, fmt.Errorf("demo: open channel: %w", broker.Explain(err))
	}
	defer ch.Close()
	if sum.Before, err = depth(ch, p.Error.Queue); err != nil {
		return sum, err
	}
	if sum.Before > 0 {
		o.Progress.Earlier(sum.Before)
	}
	mix := Mix()
	if err := publish(ctx, ch, p, mix); err != nil {
		return sum, err
	}
	sum.Published = len(mix)
	for _, m := range mix {
		if m.Parks() {
			sum.Expected++
		}
	}
	o.Progress.Published(len(mix), sum.Expected)

	err = consume(ctx, o, p, ch, &sum)
	sum.Elapsed = time.Since(start)
	if err != nil {
		return sum, err
	}
	o.Progress.Filled(p.Error.Queue, sum.After)
	return sum, nil
}

// consume runs daemon.Run with the demo handler until the parking lot
// holds Before+Expected and nothing is left to retry, or the deadline.
func consume(ctx context.Context, o Options, p retrycore.Pipeline, ch *amqp.Channel, sum *Summary) error {
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	var mu sync.Mutex
	runErr := make(chan error, 1)
	go func() {
		runErr <- daemon.Run(runCtx, daemon.RunOptions{
			Pipeline: p, Broker: o.Broker, Management: o.Management, Logger: o.Logger,
			OnSettled: func(r daemon.Result) {
				mu.Lock()
				sum.Outcomes[r.Outcome]++
				mu.Unlock()
			},
		}, Handler())
	}()
	want := sum.Before + sum.Expected
	deadline := time.NewTimer(o.Timeout)
	defer deadline.Stop()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err := <-runErr:
			if err == nil {
				err = ctx.Err()
			}
			return fmt.Errorf("demo: the consumer stopped early: %w", err)
		case <-deadline.C:
			stop()
			<-runErr
			n, _ := depth(ch, p.Error.Queue)
			return fmt.Errorf("demo: after %s the parking lot holds %d, not %d (is another consumer on %s?)", o.Timeout, n, want, p.Main.Queue)
		case <-tick.C:
		}
		parked, err := depth(ch, p.Error.Queue)
		if err != nil {
			return err
		}
		busy, err := inFlight(ch, p)
		if err != nil {
			return err
		}
		if parked >= want && busy == 0 {
			sum.After = parked
			stop()
			// Run has returned: no OnSettled runs after this.
			if err := <-runErr; err != nil && !errors.Is(err, context.Canceled) {
				return fmt.Errorf("demo: consumer: %w", err)
			}
			return nil
		}
	}
}

// inFlight counts messages still in the main and delay queues.
func inFlight(ch *amqp.Channel, p retrycore.Pipeline) (int, error) {
	n, err := depth(ch, p.Main.Queue)
	if err != nil {
		return 0, err
	}
	for _, t := range p.Tiers() {
		d, err := depth(ch, t.Queue)
		if err != nil {
			return 0, err
		}
		n += d
	}
	return n, nil
}

// depth is a queue's ready messages (the broker's count).
func depth(ch *amqp.Channel, queue string) (int, error) {
	n, err := broker.ReadyCount(ch, queue)
	if err != nil {
		return 0, fmt.Errorf("demo: queue %s: %w", queue, err)
	}
	return n, nil
}
