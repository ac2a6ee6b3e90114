package daemon

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/retrycore"
)

// RunOptions configure the consumer loop.
type RunOptions struct {
	Pipeline retrycore.Pipeline
	// Broker says where to connect. Broker.Name prefixes the two connection
	// names ("<name> consume", "<name> publish"); the default prefix is
	// "parkinglot daemon <pipeline name>".
	Broker broker.Options
	// Management, when set, lets each (re)declare of the topology report
	// every differing argument (see Declare).
	Management *broker.Management
	// ManagementCheck, when set, is the check Management passed
	// (broker.CheckManagement): each connection the loop opens is held
	// against it, with no request, and one to another cluster stops the
	// loop (a URL of a list that did not answer the check may answer a
	// reconnect).
	ManagementCheck *broker.ManagementCheck

	Logger  *slog.Logger // nil: discard
	Metrics *Metrics     // nil: none

	// Reconnect is the backoff between dial attempts and between sessions
	// that end quickly; default 100ms … 30s.
	Reconnect broker.Backoff
	// PublishTimeout bounds the wait for a retry/park copy's confirm;
	// default 30s. A copy not confirmed in time is a failed publish.
	PublishTimeout time.Duration
	// RequeueBackoff is the wait before giving back a message whose copy
	// failed, growing with consecutive failures; default 100ms … 5s.
	RequeueBackoff broker.Backoff
	// AbandonAfter is how long past its timeout a handler may take to
	// return before the loop stops waiting for it (and counts the timeout);
	// default 3s.
	AbandonAfter time.Duration

	// OnConsuming, when set, is called each time the loop starts consuming:
	// at start-up (session 1) and after each reconnect.
	OnConsuming func(session int)
	// OnStopped, when set, is called each time a session stops consuming:
	// its connection was lost, or ctx ended; as it stops, before its
	// handlers finish and its acks drain (it is not ready meanwhile).
	OnStopped func()
	// OnSettled, when set, is called after the loop decided a message's
	// fate and queued its ack or nack. It is called from the worker and
	// confirm-tracker goroutines, so it must be safe for concurrent use,
	// and quick.
	OnSettled func(Result)
}

// Result is what the loop did with one delivery.
type Result struct {
	MessageID string
	Attempt   int    // 1-based attempt that just ran
	Outcome   string // an OutcomeLabel*
	// Tier is the delay queue a retried copy went to.
	Tier string
	// Kind is x-failure-kind for parked messages.
	Kind string
	// Err is the handler's error, or the publish error for publish_failed.
	Err error
}

func (o RunOptions) withDefaults() RunOptions {
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if o.Broker.Name == "" {
		o.Broker.Name = "parkinglot daemon " + o.Pipeline.Name
	}
	if o.Broker.Logger == nil {
		o.Broker.Logger = o.Logger
	}
	if o.PublishTimeout <= 0 {
		o.PublishTimeout = 30 * time.Second
	}
	if o.RequeueBackoff == (broker.Backoff{}) {
		o.RequeueBackoff = broker.Backoff{Initial: 100 * time.Millisecond, Max: 5 * time.Second}
	}
	if o.AbandonAfter <= 0 {
		o.AbandonAfter = 3 * time.Second
	}
	return o
}

// fatal reports errors that reconnecting cannot fix: a permanent dial
// error, a topology that contradicts the pipeline, refused access, a
// broker of another cluster than the management API's.
func fatal(err error) bool {
	return broker.Permanent(err) || errors.Is(err, broker.ErrPreconditionFailed) || errors.Is(err, broker.ErrAccessRefused) ||
		errors.Is(err, broker.ErrManagementMismatch)
}

// stableSession is how long a session must last for the reconnect backoff
// to start again from its shortest wait.
const stableSession = 30 * time.Second

// Run consumes the pipeline's main queue and hands each message to h until
// ctx is cancelled: it acks what h finished, retries transient failures
// through the delay tiers (acking only after the broker confirmed the
// copy), and parks permanent failures and exhausted retries. It reconnects
// and redeclares the topology when a connection drops. On cancellation it
// starts nothing more, lets in-flight handlers finish, sends their acks,
// cancels its consumer (whose answer means the broker applied those acks),
// gives back what it had not started, and returns nil. It returns an error
// for what reconnecting cannot fix: a bad URL or credentials, a topology
// that differs from the pipeline.
func Run(ctx context.Context, opts RunOptions, h Handler) error {
	if h == nil {
		return errors.New("run: no handler")
	}
	// A pipeline built in Go gets the defaults a loaded one has: without
	// them a zero handler timeout would give every handler an expired
	// context, and every message would be parked unhandled.
	opts.Pipeline.SetDefaults()
	if err := opts.Pipeline.Validate(); err != nil {
		return err
	}
	o := opts.withDefaults()
	log := o.Logger.With("pipeline", o.Pipeline.Name)
	short := 0    // consecutive sessions (or attempts) that ended quickly
	sessions := 0 // sessions that started consuming
	for {
		s, err := connect(ctx, &o, h, log)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			if fatal(err) {
				return err
			}
			log.Warn("could not start consuming; retrying", "err", err)
			if !sleep(ctx, o.Reconnect.Delay(short)) {
				return nil
			}
			short++
			continue
		}
		sessions++
		if sessions > 1 {
			o.Metrics.reconnected()
		}
		started := time.Now()
		log.Info("consuming", "queue", o.Pipeline.Main.Queue, "session", sessions, "prefetch", o.Pipeline.Prefetch, "concurrency", o.Pipeline.Concurrency, "url", s.consume.URL, "publish_url", s.publish.URL)
		if o.OnConsuming != nil {
			o.OnConsuming(sessions)
		}
		lost := s.run(ctx) // calls OnStopped as it stops
		if ctx.Err() != nil {
			log.Info("stopped: every started message finished")
			return nil
		}
		log.Warn("connection lost; reconnecting", "err", lost)
		if time.Since(started) > stableSession {
			short = 0
		}
		if !sleep(ctx, o.Reconnect.Delay(short)) {
			return nil
		}
		short++
	}
}

// sleep waits d or until ctx ends, reporting whether the wait completed.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// connect dials both connections, declares the topology and starts
// consuming.
func connect(ctx context.Context, o *RunOptions, h Handler, log *slog.Logger) (*session, error) {
	consumeOpts, publishOpts := o.Broker, o.Broker
	consumeOpts.Name = o.Broker.Name + " consume"
	publishOpts.Name = o.Broker.Name + " publish"
	consume, err := broker.Redial(ctx, consumeOpts, o.Reconnect)
	if err != nil {
		return nil, err
	}
	// A resource alarm blocks publishing connections; consuming on a
	// connection of its own keeps acks flowing meanwhile.
	publish, err := broker.Redial(ctx, publishOpts, o.Reconnect)
	if err != nil {
		_ = consume.Close()
		return nil, err
	}
	if k := o.ManagementCheck; k != nil {
		for _, c := range []*broker.Conn{consume, publish} {
			if err := k.Against(ctx, c); errors.Is(err, broker.ErrManagementMismatch) {
				_ = consume.Close()
				_ = publish.Close()
				return nil, err
			}
		}
	}
	s := &session{o: o, h: h, log: log, consume: consume, publish: publish, user: publish.User}
	if err := s.setup(ctx); err != nil {
		_ = consume.Close()
		_ = publish.Close()
		return nil, err
	}
	return s, nil
}

// setup declares the topology (on a channel of its own: a 406 closes it)
// and opens the consume channel.
func (s *session) setup(ctx context.Context) error {
	p := s.o.Pipeline
	dch, err := s.consume.Channel()
	if err != nil {
		return fmt.Errorf("open channel: %w", broker.Explain(err))
	}
	rep, err := retrycore.Declare(ctx, dch, p, retrycore.DeclareOptions{Server: s.consume.ServerVersion, Management: s.o.Management})
	_ = dch.Close()
	if err != nil {
		// fatal() tells a differing topology (ErrPreconditionFailed) from a
		// connection that dropped mid-declare.
		return fmt.Errorf("declare topology: %w", err)
	}
	for _, w := range rep.Warnings {
		s.log.Warn(w)
	}
	created := 0
	for _, e := range rep.Entries {
		if e.Status == retrycore.StatusCreated {
			created++
		}
	}
	s.log.Debug("topology declared", "entries", len(rep.Entries), "created", created)

	ch, err := s.consume.Channel()
	if err != nil {
		return fmt.Errorf("open consume channel: %w", broker.Explain(err))
	}
	if err := ch.Qos(p.Prefetch, 0, false /* per consumer */); err != nil {
		_ = ch.Close()
		return fmt.Errorf("set prefetch %d: %w", p.Prefetch, broker.Explain(err))
	}
	s.tag = consumerTag(p.Name)
	deliveries, err := ch.Consume(p.Main.Queue, s.tag,
		false, // auto-ack: no, acks follow the outcome
		false, // exclusive: no, several daemons share the queue
		false, // no-local
		false, // no-wait
		nil)
	if err != nil {
		_ = ch.Close()
		return fmt.Errorf("consume %q: %w", p.Main.Queue, broker.Explain(err))
	}
	s.cch, s.deliveries = ch, deliveries
	return nil
}

// consumerTag is unique per session, so an operator can tell daemons apart.
func consumerTag(pipeline string) string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return "parkinglot-" + pipeline + "-" + hex.EncodeToString(b)
}
