package daemon

import (
	"fmt"
	"sync/atomic"
	"time"
)

// awaiting is a delivery whose retry or park copy was sent: its fate waits
// for the copy's confirm.
type awaiting struct {
	tag  uint64 // the original's delivery tag (not the delivery: no body held)
	res  Result // Outcome, Tier or Kind already set for the success case
	copy *sentCopy
	err  error     // the send failed: nothing to wait for
	sent time.Time // when the worker sent it, for the failure backoff
	// what names the copy in errors: "retry m-1 to orders.retry.5s".
	what    string
	handled string // the handler's error text, for the log
}

// confirmTracker settles one worker's sent copies in the order they were
// sent: it acks the original once its copy is confirmed, and gives it back
// otherwise. The worker goes on to the next delivery meanwhile, so a slow
// confirm no longer holds a handler slot; the prefetch still bounds how
// many messages wait here.
type confirmTracker struct {
	s       *session
	pending chan awaiting
	done    chan struct{}

	failures   int       // consecutive failed copies, for the backoff
	backoffEnd time.Time // copies sent before this already waited one out
	// pausedUntil (unix nanoseconds) holds the worker's next send while a
	// failure backoff runs, so a broken retry path is not hammered.
	pausedUntil atomic.Int64
}

func newConfirmTracker(s *session, window int) *confirmTracker {
	return &confirmTracker{s: s, pending: make(chan awaiting, window), done: make(chan struct{})}
}

// run settles until pending is closed and drained.
func (t *confirmTracker) run() {
	defer close(t.done)
	for a := range t.pending {
		t.settle(a)
	}
}

// close waits for every copy already sent to be settled.
func (t *confirmTracker) close() {
	close(t.pending)
	<-t.done
}

func (t *confirmTracker) settle(a awaiting) {
	s := t.s
	err := a.err
	if err == nil {
		err = a.copy.wait()
	}
	if err != nil {
		t.giveBack(a, err)
		return
	}
	t.failures = 0
	s.acker.ack(a.tag)
	switch a.res.Outcome {
	case OutcomeLabelRetried:
		// At info, like parked: at the default level a retry is the one
		// sign of life between a failure and the parking.
		s.log.Info("retrying", "id", a.res.MessageID, "attempt", a.res.Attempt, "tier", a.res.Tier, "in", s.tierDelay(a.res.Tier), "err", a.handled)
	case OutcomeLabelParked:
		s.log.Info("parked", "id", a.res.MessageID, "kind", a.res.Kind, "attempt", a.res.Attempt, "err", a.handled)
	}
	s.o.Metrics.outcome(a.res.Outcome)
	s.settled(a.res)
}

// tierDelay is the delay of the tier whose queue is queue, as the pipeline
// file writes it ("5s"), or "" for a queue that is not one of its tiers.
func (s *session) tierDelay(queue string) string {
	for _, t := range s.o.Pipeline.Tiers() {
		if t.Queue == queue {
			return t.Delay.Text
		}
	}
	return ""
}

// giveBack handles a copy the broker did not confirm: the original is
// never acked, it is given back (nack, requeue) after a backoff that grows
// with consecutive failures, so a broken retry path does not spin. Copies
// sent while a backoff ran are given back without another.
func (t *confirmTracker) giveBack(a awaiting, cause error) {
	s := t.s
	err := fmt.Errorf("%s: %w", a.what, cause)
	if !a.sent.Before(t.backoffEnd) {
		wait := s.o.RequeueBackoff.Delay(t.failures)
		t.failures++
		s.log.Warn("publish failed; giving the message back", "err", err, "in", wait.Round(time.Millisecond))
		end := time.Now().Add(wait)
		t.pausedUntil.Store(end.UnixNano())
		timer := time.NewTimer(wait)
		select {
		case <-timer.C:
		case <-s.stopping:
			timer.Stop()
		}
		t.backoffEnd = time.Now()
	} else {
		s.log.Warn("publish failed; giving the message back", "err", err)
	}
	s.acker.requeue(a.tag)
	s.o.Metrics.outcome(OutcomeLabelPublishFailed)
	res := a.res
	res.Outcome, res.Tier, res.Kind, res.Err = OutcomeLabelPublishFailed, "", "", err
	s.settled(res)
}

// holdWhilePaused blocks the worker's next send while a failure backoff
// runs (or until the session stops).
func (t *confirmTracker) holdWhilePaused() {
	wait := time.Until(time.Unix(0, t.pausedUntil.Load()))
	if wait <= 0 {
		return
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case <-timer.C:
	case <-t.s.stopping:
	}
}
