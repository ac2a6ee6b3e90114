package replay

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// drainGrace bounds how long an interrupted run waits for the confirms of
// what it already sent.
const drainGrace = 30 * time.Second

// loop publishes jobs within the window and the rate, and hands settled
// messages to the committer. It returns the jobs it took but did not send
// (interrupted, or stopped because the audit log failed).
func (r *run) loop(ctx context.Context, pub *publisher, jobs <-chan *job, com *committer, open *atomic.Int64) []*job {
	bg := context.WithoutCancel(ctx) // recovery and re-sends finish even when interrupted
	var pending *job
	rateTimer := time.NewTimer(time.Hour)
	rateTimer.Stop()
	defer rateTimer.Stop()
	var rateC <-chan time.Time
	// stalled: nothing confirmed for confirmTimeout with messages in
	// flight. progress is the last confirm, or the send that put the first
	// message in flight.
	stall := time.NewTimer(r.confirmTimeout)
	defer stall.Stop()
	stalled, progress := false, time.Now()
	send := func(j *job) {
		idle, reopens := pub.idle(), pub.reopens
		open.Add(1)
		// bg: a job the loop decided to send is sent, and its confirm
		// awaited, even when an interrupt lands in between; refused for a
		// cancelled context it would count as failed, though never sent.
		com.submit(pub.send(bg, j))
		if idle || pub.reopens != reopens { // first in flight, or re-sent on a new connection
			progress = time.Now()
		}
	}
	jobsC := jobs
	for ctx.Err() == nil && !r.stop.Load() && !stalled {
		if jobsC == nil && pending == nil && pub.idle() {
			return nil
		}
		var in <-chan *job
		if pending == nil && jobsC != nil && open.Load() < int64(r.window) {
			in = jobsC
		}
		select {
		case j, ok := <-in:
			if !ok {
				jobsC = nil
				continue
			}
			if r.limiter != nil {
				if d := r.limiter.Reserve().Delay(); d > 0 {
					pending = j
					rateTimer.Reset(d)
					rateC = rateTimer.C
					r.tally.waiting()
					continue
				}
			}
			send(j)
			jobsC = r.burst(ctx, jobsC, open, send)
		case <-rateC:
			rateC = nil
			j := pending
			pending = nil
			send(j)
		case c, ok := <-pub.confirmations():
			if !ok {
				com.submit(pub.lost(bg))
				progress = time.Now() // in flight again on a new connection
				continue
			}
			com.submit(pub.confirmed(bg, c))
			progress = time.Now()
		case <-stall.C:
			switch quiet := time.Since(progress); {
			case pub.idle():
				stall.Reset(r.confirmTimeout)
			case quiet < r.confirmTimeout:
				stall.Reset(r.confirmTimeout - quiet)
			default:
				// A last look: confirms may wait behind this tick.
				if c, ok := pollConfirm(pub); ok {
					com.submit(pub.confirmed(bg, c))
					progress = time.Now()
					stall.Reset(r.confirmTimeout)
					continue
				}
				stalled = true
				r.gaveUp.Store(true)
				// Halted, not retried: another pass would only send another
				// window into the same silence.
				r.halt(fmt.Errorf("%w: the broker confirmed nothing for %v with %d message(s) in flight (a cluster that lost its majority?); those messages are still parked, their copies' outcome unknown", ErrNotAllDone, r.confirmTimeout, len(pub.inflight)))
			}
		case <-com.released:
		case <-ctx.Done():
		}
	}
	var left []*job
	if pending != nil {
		left = append(left, pending)
	}
	grace := drainGrace
	if stalled { // it waited confirmTimeout already
		grace = 0
	}
	r.drain(bg, pub, com, grace)
	if stalled {
		// Every copy in flight is settled as outcome unknown (its message
		// stays parked): the publish connection has nothing left to wait
		// for, and a broker that confirms nothing would not answer its
		// channel's close either.
		pub.abandon()
	}
	return left
}

// burstSize bounds how many jobs burst sends before the publish loop looks
// at its confirms again.
const burstSize = 64

// burst sends the jobs already waiting, while the window has room, without
// going through the publish loop's select, which locks every channel it
// waits on (seven) for each job. A rate-limited run sends one at a time.
// It returns jobs, or nil once it is closed.
func (r *run) burst(ctx context.Context, jobs <-chan *job, open *atomic.Int64, send func(*job)) <-chan *job {
	for range burstSize {
		if r.limiter != nil || open.Load() >= int64(r.window) || ctx.Err() != nil || r.stop.Load() {
			return jobs
		}
		select {
		case j, ok := <-jobs:
			if !ok {
				return nil
			}
			send(j)
		default:
			return jobs
		}
	}
	return jobs
}

// drain waits (bounded) for the confirms of what is in flight, so an
// interrupted run still removes what the broker confirmed.
func (r *run) drain(ctx context.Context, pub *publisher, com *committer, wait time.Duration) {
	for !pub.idle() { // confirms already received count, whatever the grace
		c, ok := pollConfirm(pub)
		if !ok {
			break
		}
		com.submit(pub.confirmed(ctx, c))
	}
	grace := time.NewTimer(wait)
	defer grace.Stop()
	for !pub.idle() {
		select {
		case c, ok := <-pub.confirmations():
			if !ok {
				com.submit(pub.lost(ctx))
				continue
			}
			com.submit(pub.confirmed(ctx, c))
		case <-grace.C:
			var out []settled
			for t, f := range pub.inflight {
				delete(pub.inflight, t)
				out = append(out, settled{f.job, outcomeUnknown(f.job)})
			}
			com.submit(out)
			return
		}
	}
}

// pollConfirm takes a confirmation that has already arrived, without
// waiting (ok false: none, or the channel is gone).
func pollConfirm(pub *publisher) (amqp.Confirmation, bool) {
	select {
	case c, ok := <-pub.confirmations():
		return c, ok
	default:
		return amqp.Confirmation{}, false
	}
}
