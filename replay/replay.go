package replay

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/retrycore"
)

// Options say which messages of a parking lot to replay, and where.
type Options struct {
	Queue  string
	Select Selector
	// To overrides the origin (--to EXCHANGE:ROUTING_KEY).
	To *retrycore.Destination
	// Target is TargetOrigin (default) or TargetQueue: only the queue that
	// failed (default exchange, routing key = that queue).
	Target Target
	// Rate is messages per second; 0 is as fast as confirms come.
	Rate float64
	// DryRun shows what would go where (Plan) and changes nothing.
	DryRun bool
	// Window is how many messages may be in flight (published, not yet
	// confirmed and removed); 0 is DefaultWindow.
	Window int
	// ConfirmTimeout: when the broker confirms nothing this long while
	// messages are in flight, the run stops and reports them as outcome
	// unknown (still parked); 0 is DefaultConfirmTimeout.
	ConfirmTimeout time.Duration
	// Progress receives events as the run goes (from several goroutines,
	// one at a time).
	Progress func(Event)
	// Run is the replay run's id (x-replay-run, the audit log's run);
	// NewRunID() when empty. A canary's steps share one.
	Run string
	// Limit, when > 0, is how many messages the run sends at most, the
	// first of the selection: the count a person confirmed in a plan, so
	// that messages parked since do not go with them (new ones arrive at
	// the back); a canary step's size. A message that cannot be sent at all
	// (no origin) does not count; one sent and refused does.
	Limit int

	// earlier, when set, is what the earlier steps of the same canary run
	// did: what failed there is not tried again, what they sent is under
	// the loop guard, and this run's failures and copies join them.
	earlier *earlierSteps
}

func (o Options) check() error {
	if o.Queue == "" {
		return fmt.Errorf("%w: no queue given", ErrBadSelection)
	}
	if err := CheckDestination(o.To, o.Target); err != nil {
		return err
	}
	return checkRateWindow(o.Rate, o.Window)
}

// CheckDestination is the one rule for where replayed messages go, for the
// CLI and the TUI alike: the origin by default (target ""), or a given
// destination, or a given target (origin, or queue: the queue that failed
// alone) — a destination and a target together are an error wrapping
// ErrTwoDestinations, an unknown target one wrapping ErrBadTarget, and a
// destination that can never route one wrapping retrycore.ErrNoQueueName
// (all wrap ErrBadSelection).
func CheckDestination(to *retrycore.Destination, target Target) error {
	switch target {
	case "", TargetOrigin, TargetQueue:
	default:
		return fmt.Errorf("%w: %w %q (known: origin, queue)", ErrBadSelection, ErrBadTarget, target)
	}
	if to != nil {
		if err := to.Check(); err != nil {
			return fmt.Errorf("%w: destination %s: %w", ErrBadSelection, to, err)
		}
	}
	if to != nil && target != "" {
		return fmt.Errorf("%w: %w", ErrBadSelection, ErrTwoDestinations)
	}
	return nil
}

// MinRate is the slowest rate a run takes (one message every 1,000 s):
// slower is a mistake, and its time estimate would overflow.
const MinRate = 0.001

// RateOK is the rule for a rate: 0 (as fast as confirms come) or a finite
// number of messages per second of MinRate or more.
func RateOK(rate float64) bool {
	return rate == 0 || rate >= MinRate && !math.IsInf(rate, 1) // NaN fails both
}

// checkRateWindow refuses a rate RateOK refuses, or a negative window (0
// means unlimited and the default).
func checkRateWindow(rate float64, window int) error {
	if !RateOK(rate) {
		return fmt.Errorf("%w: rate %v: want %v messages per second or more (0: as fast as confirms come)", ErrBadSelection, rate, MinRate)
	}
	if window < 0 {
		return fmt.Errorf("%w: window %d: want 1 or more messages in flight (0: the default, %d)", ErrBadSelection, window, DefaultWindow)
	}
	return nil
}

// Replay sends the chosen messages back (package doc, "What a replay sends") and removes each parked
// copy only after the broker confirmed a routed copy and its audit entry is
// on disk. The error is for the run as a whole (a missing queue, an
// unwritable audit log); per-message failures are in the Result, whose
// Err() wraps ErrNotAllDone.
func (s *Session) Replay(ctx context.Context, o Options) (Result, error) {
	if err := o.check(); err != nil {
		return Result{}, err
	}
	if o.DryRun {
		return s.dryRun(ctx, o)
	}
	sel, err := newSelection(o.Select, true, s.Bodies)
	if err != nil {
		return Result{}, err
	}
	defer sel.close()
	if o.earlier != nil {
		o.earlier.seedFound(sel)
		defer o.earlier.keepFound(sel)
	}
	r, err := s.newRun(EventReplayed, o.Rate, o.Window, o.Progress)
	if err != nil {
		return Result{}, err
	}
	if o.ConfirmTimeout > 0 {
		r.confirmTimeout = o.ConfirmTimeout
	}
	r.runID = o.Run
	if r.runID == "" {
		r.runID = NewRunID()
	}
	r.limit = o.Limit
	r.tally.expect(s.expectedSize(ctx, o))
	if o.earlier != nil {
		r.earlier, r.failedKeys, r.seed, r.sent = o.earlier, o.earlier.counts(), o.earlier.seed, o.earlier.sent
	}
	defer r.close()
	if _, merr := s.Management(ctx); merr != nil {
		r.tally.note(Note{Kind: NoteDelayNotFollowed, Err: merr})
	}
	err = s.replayPasses(ctx, r, o.Queue, sel, s.originQuery(ctx, o.Queue, o.To), replayPrepare(o.Queue, o.Target, "replay"))
	r.leftovers()
	res := r.tally.finish()
	res.Run = r.runID
	res.sent = r.sentN
	return res, err
}

// prepareFunc turns a chosen parked message into the job that publishes
// its copy.
type prepareFunc func(h *broker.Held, sum Summary, replayID string) (*job, error)

func replayPrepare(queue string, target Target, action string) prepareFunc {
	entry := &AuditEntry{Action: action, Queue: queue}
	return func(h *broker.Held, sum Summary, rid string) (*job, error) {
		dest, err := destinationFor(sum, target)
		if err != nil {
			return nil, err
		}
		transform := Transform
		if h.OwnsHeaders() {
			// Its summary is made and nothing reads its headers again:
			// they become the copy's.
			transform = transformOwned
		}
		pub, resets := transform(h.Message, rid, time.Now())
		if sum.Facts.Error != "" {
			// What it failed with, so that a copy that comes back can be
			// told to fail the same way or another.
			pub.Headers[retrycore.HeaderReplayedError] = sum.Facts.Error
		} else {
			delete(pub.Headers, retrycore.HeaderReplayedError)
		}
		delete(pub.Headers, retrycore.HeaderReplayRun) // an earlier run's; readPass sets this run's
		if target == TargetQueue {
			// Sent to the failed queue alone, the copy would otherwise
			// forget where it came from: the next failure's origin would be
			// that queue.
			retrycore.RecordOrigin(pub.Headers, *sum.Origin)
			resets = append(resets, sendAlone(pub.Headers)...)
		}
		return &job{
			held: h, id: sum.ID, replayID: rid, dest: dest, pub: pub, resets: resets, entry: entry,
		}, nil
	}
}

// destinationFor is where a message goes: its origin, or with TargetQueue
// the queue that failed alone.
func destinationFor(sum Summary, target Target) (retrycore.Destination, error) {
	if sum.Origin == nil {
		if sum.originErr != nil {
			return retrycore.Destination{}, sum.originErr
		}
		return retrycore.Destination{}, errors.New(sum.OriginErr)
	}
	if target == TargetQueue {
		if sum.Origin.Queue == "" {
			return retrycore.Destination{}, ErrFailedQueueUnknown
		}
		return retrycore.Destination{Exchange: "", RoutingKey: sum.Origin.Queue}, nil
	}
	return sum.Origin.Destination, nil
}

// replayPasses runs passes over the parking lot until the selection is
// done, re-dialling and carrying on (up to s.Reconnects times) when the
// consuming connection is lost.
func (s *Session) replayPasses(ctx context.Context, r *run, queue string, sel *selection, q retrycore.OriginQuery, prepare prepareFunc) error {
	pub, err := newPublisher(ctx, s, r.window)
	if err != nil {
		return err
	}
	defer pub.close()
	// Each pass reads the whole parking lot: what an earlier pass removed
	// is gone, what failed is not tried again (takeFailed), and every other
	// message the selection picks, however many share an id, is acted on.
	for attempt := 0; ; attempt++ {
		p, err := s.openPass(ctx, queue, 0)
		if err != nil {
			return err
		}
		r.boundPass(p.Facts())
		perr := r.execute(ctx, pub, func(ctx context.Context, jobs chan<- *job) error {
			return r.readPass(ctx, p, queue, sel, q, prepare, jobs)
		})
		closeCtx := context.WithoutCancel(ctx)
		if r.gaveUp.Load() {
			// The broker confirmed nothing for --confirm-timeout: the pass
			// does not read on to keep the parking lot's order or wait for
			// ready counts, only its bounded cancel and close remain, and
			// everything not removed stays parked.
			c, cancel := context.WithCancel(closeCtx)
			cancel()
			closeCtx = c
		}
		rep, cerr := p.Close(closeCtx)
		r.tally.pass(rep)
		if herr := r.haltErr(); herr != nil {
			return fmt.Errorf("stopped, nothing more was removed: %w", herr)
		}
		if errors.Is(perr, errPassTimeUp) && cerr == nil && ctx.Err() == nil && !r.stop.Load() {
			r.passDone(false)
			attempt-- // not a reconnect: the next pass goes on
			continue
		}
		if perr == nil && cerr == nil {
			r.passDone(false)
			if r.full() { // it stopped reading: ids it did not reach are not missing
				return nil
			}
			return reportMissing(sel, r.tally, queue)
		}
		if perr == nil {
			perr = cerr
		}
		r.passDone(true)
		if ctx.Err() != nil || r.stop.Load() || attempt >= s.Reconnects {
			return perr
		}
		r.tally.note(Note{Kind: NoteReconnect, Err: perr})
	}
}

// jobFor turns a chosen message into its job: nil when it is not sent
// (it failed for good earlier, the run sent its limit, or its copy could
// not be prepared); enough when the run sent its limit and owes no
// re-send, so the pass can end.
func (r *run) jobFor(c chosen, prepare prepareFunc) (j *job, enough bool) {
	h, id, sum := c.held, c.id, c.sum
	key := r.key(id, h.Body)
	if r.takeFailed(key) {
		return nil, false
	}
	if r.full() && !r.owes(key) {
		return nil, !r.owesAny()
	}
	rid, prior := r.replayIDFor(key)
	if prior == nil {
		r.tally.chosen(id)
	}
	j, err := prepare(h, sum, rid)
	if err != nil {
		r.failedFor(&job{id: id, key: key}, err)
		return nil, false
	}
	if prior == nil {
		r.sentN++
	}
	j.key = key
	j.counted = prior != nil && prior.counted
	if r.runID != "" {
		j.pub.Headers[retrycore.HeaderReplayRun] = r.runID
	}
	r.markSent(rid)
	return j, false
}

// walk is how a replay reads a pass: the selection, and the loop guard
// that passes over this run's own copies.
func (r *run) walk(queue string, sel *selection, q retrycore.OriginQuery) walk {
	return walk{queue: queue, sel: sel, q: q,
		skip: func(id string, err error) { r.tally.skipped(id, err.Error()) },
		admit: func(h *broker.Held, id string) bool {
			if rid, ok := h.Headers[retrycore.HeaderReplayID].(string); ok && r.wasSent(rid) {
				r.tally.skipped(id, "already replayed in this run (loop guard)")
				return false
			}
			return true
		},
		stopped: r.stop.Load,
	}
}

// readPass is the producer of a replay: it reads the pass, applies the loop
// guard and the selection, and prepares a job per chosen message.
func (r *run) readPass(ctx context.Context, p *broker.Pass, queue string, sel *selection, q retrycore.OriginQuery, prepare prepareFunc, jobs chan<- *job) error {
	start := time.Now()
	for c, err := range r.walk(queue, sel, q).chosen(ctx, p) {
		if err != nil {
			return err
		}
		if r.timeUp(start) {
			return errPassTimeUp // what it holds is given back and read again
		}
		j, enough := r.jobFor(c, prepare)
		if enough {
			return nil // sent its limit, owes no re-send: the rest is given back unread
		}
		if j == nil {
			continue
		}
		select {
		case jobs <- j:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// expectedSize is how many messages a run will act on, where that is
// known before it reads them: the limit the caller's plan set, the ids
// asked for, or, for all, the queue's ready messages now; 0 otherwise (a
// filter tells only once read).
func (s *Session) expectedSize(ctx context.Context, o Options) int {
	switch {
	case o.Progress == nil:
		return 0
	case o.Limit > 0:
		return o.Limit
	case len(o.Select.IDs) > 0 && o.Select.Filter == "":
		return len(o.Select.IDs)
	case o.Select.All && o.Select.Filter == "":
		// The queue's own count: the management API's lags a publish.
		if n, err := s.ReadyCount(ctx, o.Queue); err == nil {
			return n
		}
	}
	return 0
}
