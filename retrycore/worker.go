package retrycore

import (
	"context"
	"errors"
	"fmt"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker"
)

// worker runs the handler for one delivery at a time and carries out the
// outcome on its own publish channel.
type worker struct {
	s        *session
	pub      *publisher
	failures int // consecutive failed publishes, for the requeue backoff
}

func (w *worker) run(work <-chan amqp.Delivery) {
	defer w.pub.close()
	for d := range work {
		w.process(d)
	}
}

// process handles one delivery from start to ack or nack.
func (w *worker) process(d amqp.Delivery) {
	s, p := w.s, w.s.o.Pipeline
	m := broker.FromDelivery(d)
	retries := AttemptsOf(d.Headers)
	dv := Delivery{
		MessageID:   m.ID(),
		Exchange:    d.Exchange,
		RoutingKey:  d.RoutingKey,
		Queue:       p.Main.Queue,
		Attempt:     int(min(retries, 1<<30)) + 1,
		Redelivered: d.Redelivered,
		ContentType: d.ContentType,
		Headers:     d.Headers,
		Body:        d.Body,
	}
	s.o.Metrics.inFlightAdd(1)
	defer s.o.Metrics.inFlightAdd(-1)

	start := time.Now()
	herr := w.call(dv)
	s.o.Metrics.observe(time.Since(start))
	res := Result{MessageID: dv.MessageID, Attempt: dv.Attempt, Err: herr}

	if s.consumeLost.Load() {
		// The tag died with its channel and the broker redelivers the
		// message; a copy now would be a duplicate.
		s.o.Metrics.outcome(OutcomeLabelRequeued)
		res.Outcome, res.Err = OutcomeLabelRequeued, errConsumeLost
		s.settled(res)
		return
	}

	outcome, kind := Classify(herr, retries, p.MaxRetries, false)
	f := failure{Exchange: d.Exchange, RoutingKey: d.RoutingKey, Queue: p.Main.Queue}
	if herr != nil {
		f.Err = herr.Error()
	}
	switch outcome {
	case OutcomeDone:
		s.acker.ack(d.DeliveryTag)
		res.Outcome = OutcomeLabelDone
	case OutcomeRetry:
		n := retries + 1
		tier := p.Tier(int(min(n, 1<<30)))
		pub := copyPublishing(m, retryHeaders(d.Headers, f, n, time.Now()), s.user)
		if err := w.pub.publish(context.Background(), p.Retry.Exchange, tier.RoutingKey, pub); err != nil {
			w.giveBack(d, &res, fmt.Errorf("retry %s to %s: %w", dv.MessageID, tier.Queue, err))
			return
		}
		w.failures = 0
		s.acker.ack(d.DeliveryTag)
		res.Outcome, res.Tier = OutcomeLabelRetried, tier.Queue
		s.log.Debug("retrying", "id", dv.MessageID, "retry", n, "tier", tier.Queue, "err", f.Err)
	case OutcomePark:
		pub := copyPublishing(m, parkHeaders(d.Headers, f, retries, kind, time.Now()), s.user)
		if err := w.pub.publish(context.Background(), p.Error.Exchange, p.Error.RoutingKey, pub); err != nil {
			w.giveBack(d, &res, fmt.Errorf("park %s in %s: %w", dv.MessageID, p.Error.Queue, err))
			return
		}
		w.failures = 0
		s.acker.ack(d.DeliveryTag)
		res.Outcome, res.Kind = OutcomeLabelParked, kind
		s.log.Info("parked", "id", dv.MessageID, "kind", kind, "retries", retries, "err", f.Err)
	case OutcomeRequeue:
		s.acker.requeue(d.DeliveryTag)
		res.Outcome = OutcomeLabelRequeued
	}
	s.o.Metrics.outcome(res.Outcome)
	s.settled(res)
}

// giveBack handles a copy the broker did not confirm: the original is
// never acked, it is given back (nack, requeue) after a short backoff so a
// broken retry path does not spin.
func (w *worker) giveBack(d amqp.Delivery, res *Result, err error) {
	s := w.s
	wait := s.o.RequeueBackoff.Delay(w.failures)
	w.failures++
	s.log.Warn("publish failed; giving the message back", "err", err, "in", wait.Round(time.Millisecond))
	t := time.NewTimer(wait)
	select {
	case <-t.C:
	case <-s.stopping:
		t.Stop()
	}
	s.acker.requeue(d.DeliveryTag)
	s.o.Metrics.outcome(OutcomeLabelPublishFailed)
	res.Outcome, res.Err = OutcomeLabelPublishFailed, err
	s.settled(*res)
}

// TimeoutError is a handler that ran past handler_timeout: transient.
type TimeoutError struct {
	After time.Duration
	Err   error // what the handler returned, if it returned
}

func (e *TimeoutError) Error() string {
	s := "handler timed out after " + e.After.String()
	if e.Err != nil && !isBareContextError(e.Err) {
		s += " (" + e.Err.Error() + ")"
	}
	return s
}

// Unwrap makes errors.Is(err, context.DeadlineExceeded) hold.
func (e *TimeoutError) Unwrap() error { return context.DeadlineExceeded }

func isBareContextError(err error) bool {
	return err == context.DeadlineExceeded || err == context.Canceled
}

// call runs the handler with handler_timeout. The handler's context is not
// cancelled by shutdown: in-flight work finishes. A handler that ignores
// its context is waited for AbandonAfter past the timeout, then left
// running (and logged) so the message can move on.
func (w *worker) call(d Delivery) error {
	s := w.s
	timeout := s.o.Pipeline.HandlerTimeout.D
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- safeHandle(ctx, s.h, d) }()
	select {
	case err := <-done:
		if err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return &TimeoutError{After: timeout, Err: err}
		}
		return err
	case <-ctx.Done():
	}
	grace := time.NewTimer(s.o.AbandonAfter)
	defer grace.Stop()
	select {
	case err := <-done:
		if err == nil {
			return nil // it finished after all
		}
		return &TimeoutError{After: timeout, Err: err}
	case <-grace.C:
		s.log.Warn("handler ignored its timeout; left running", "id", d.MessageID, "timeout", timeout)
		return &TimeoutError{After: timeout}
	}
}

// safeHandle turns a handler panic into a transient error.
func safeHandle(ctx context.Context, h Handler, d Delivery) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("handler panicked: %v", r)
		}
	}()
	return h.Handle(ctx, d)
}
