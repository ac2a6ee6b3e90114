package daemon

import (
	"context"
	"errors"
	"fmt"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/retrycore"
)

// worker runs the handler for one delivery at a time and carries out the
// outcome on the session's publish channel; its confirm tracker settles
// the copies it sent.
type worker struct {
	s       *session
	pub     *publisher // shared by the session's workers
	tracker *confirmTracker
}

// run handles deliveries until work is closed, then waits until every copy
// it sent is settled.
func (w *worker) run(work <-chan amqp.Delivery, window int) {
	w.tracker = newConfirmTracker(w.s, window)
	go w.tracker.run()
	defer w.tracker.close()
	for d := range work {
		w.process(d)
	}
}

// process handles one delivery: done and requeue are settled here, a retry
// or park copy is sent and handed to the tracker.
func (w *worker) process(d amqp.Delivery) {
	s, p := w.s, w.s.o.Pipeline
	m := broker.FromDelivery(d)
	retries := retrycore.RetriesDone(d.Headers)
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
	f := retrycore.Failure{Exchange: d.Exchange, RoutingKey: d.RoutingKey, Queue: p.Main.Queue, DeliveryMode: d.DeliveryMode}
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
		res.Outcome, res.Tier = OutcomeLabelRetried, tier.Queue
		pub := copyPublishing(m, retrycore.RetryHeaders(d.Headers, f, n, time.Now()), s.user)
		w.send(d, res, f.Err, fmt.Sprintf("retry %s to %s", dv.MessageID, tier.Queue), p.Retry.Exchange, tier.RoutingKey, pub)
		return
	case OutcomePark:
		res.Outcome, res.Kind = OutcomeLabelParked, kind
		pub := copyPublishing(m, retrycore.ParkHeaders(d.Headers, f, retries, kind, time.Now()), s.user)
		w.send(d, res, f.Err, fmt.Sprintf("park %s in %s", dv.MessageID, p.Error.Queue), p.Error.Exchange, p.Error.RoutingKey, pub)
		return
	case OutcomeRequeue:
		s.acker.requeue(d.DeliveryTag)
		res.Outcome = OutcomeLabelRequeued
	}
	s.o.Metrics.outcome(res.Outcome)
	s.settled(res)
}

// send publishes the copy that stands for d and hands d to the tracker,
// which acks it only once the copy is confirmed.
func (w *worker) send(d amqp.Delivery, res Result, handled, what, exchange, key string, msg amqp.Publishing) {
	w.tracker.holdWhilePaused()
	a := awaiting{tag: d.DeliveryTag, res: res, sent: time.Now(), what: what, handled: handled}
	a.copy, a.err = w.pub.send(context.Background(), exchange, key, msg)
	w.tracker.pending <- a
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
