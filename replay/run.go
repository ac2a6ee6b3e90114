package replay

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/retrycore"
)

// DefaultWindow is how many messages may be published and not yet
// confirmed-and-removed at once. A busy destination queue confirms in
// batches, tens of milliseconds apart: with 512 a 100k replay spent its
// second half waiting on them (4,715 msg/s; 2,048: 6,007; 4,096 no better).
const DefaultWindow = 2048

// DefaultConfirmTimeout is how long a run waits for the broker to confirm
// anything while messages are in flight before it stops. A cluster that has
// lost the majority of a quorum queue's members neither confirms nor
// refuses (package doc, "Clusters"): the copies' outcome is unknown, and the
// messages stay parked.
const DefaultConfirmTimeout = 60 * time.Second

// errOutcomeUnknown is why a message sent but never confirmed stays parked;
// errImportOutcomeUnknown the same for an import, which parks nothing.
var (
	errOutcomeUnknown       = errors.New("outcome unknown: sent, but the broker confirmed nothing before the run stopped (its copy may still arrive: at worst a duplicate); it is still parked")
	errImportOutcomeUnknown = errors.New("outcome unknown: sent, but the broker confirmed nothing before the run stopped (its copy may still arrive: an import again may duplicate it)")
)

// outcomeUnknown is errOutcomeUnknown in j's terms.
func outcomeUnknown(j *job) error {
	if j.held == nil {
		return errImportOutcomeUnknown
	}
	return errOutcomeUnknown
}

// run is one replay, edit or import: a producer of jobs (a browse pass or a
// file), the publish loop (window, rate, confirms) and the committer (audit
// log, then acks).
type run struct {
	s       *Session
	tally   *tally
	audit   *auditLog
	window  int
	limiter *rate.Limiter
	// readAhead is how many jobs a pass prepares ahead of the publish loop,
	// and chooseFor how long it chooses (0: to its end); a rate-limited
	// run bounds both by the queue's consumer timeout (holdbound.go).
	readAhead int
	chooseFor time.Duration
	kind      EventKind
	seed      maphash.Seed
	stop      atomic.Bool // set with stopErr: the audit log failed, nothing more is removed
	stopErr   error
	// gaveUp: the broker confirmed nothing for confirmTimeout and the run
	// stopped waiting for it; its closes need not wait for it either.
	gaveUp atomic.Bool
	// confirmTimeout: see Options.ConfirmTimeout.
	confirmTimeout time.Duration
	// runID is a replay's run (Options.Run): written into each copy
	// (x-replay-run) and audit entry; "" for the other runs.
	runID string

	// limit and sentN: Options.Limit, and how many new messages the
	// producer goroutine (the only one to touch sentN) has sent.
	limit, sentN int
	// earlier: Options.earlier (nil but for a canary's runs).
	earlier *earlierSteps

	// Only the producer goroutine touches sent: the loop guard, the
	// x-replay-ids of this run's copies as 64-bit hashes (8 bytes a copy,
	// not the id: a million-message replay holds a million of them). Two
	// ids sharing a hash (odds about 1 in 10^13 at a million) would make a
	// message be skipped as already replayed: it stays parked, never lost.
	sent map[uint64]struct{}

	mu sync.Mutex
	// outstanding: per message identity, copies that were delivered but
	// whose parked copy could not be removed (its connection was lost);
	// the next pass re-sends them with the same x-replay-id.
	outstanding map[string][]pendingCopy
	// confirmed: copies removed in the current pass (see pendingCopy.counted).
	confirmed  confirmedLog
	failedKeys map[string]int // failed for good in an earlier pass of this run: not tried again
	// failedNow: failed in the current pass, added to failedKeys when it
	// ends: a second message with the same id and body in the same pass is
	// another message, tried and counted on its own.
	failedNow map[string]int
}

type pendingCopy struct {
	id, replayID string
	// counted: the copy was confirmed and its removal counted as done, but
	// the connection was lost soon after, so the ack may not have reached
	// the broker; if the message shows up again it is re-sent with the same
	// x-replay-id and not counted twice.
	counted bool
}

func (s *Session) newRun(kind EventKind, ratePerSec float64, window int, progress func(Event)) (*run, error) {
	if window <= 0 {
		window = DefaultWindow
	}
	a, err := s.openAudit()
	if err != nil {
		return nil, err
	}
	r := &run{
		s: s, tally: newTally(progress), audit: a, window: window, kind: kind,
		confirmTimeout: DefaultConfirmTimeout,
		readAhead:      readAhead,
		seed:           maphash.MakeSeed(),
		sent:           map[uint64]struct{}{},
		outstanding:    map[string][]pendingCopy{},
		failedKeys:     map[string]int{},
		failedNow:      map[string]int{},
	}
	if ratePerSec > 0 {
		r.limiter = rate.NewLimiter(rate.Limit(ratePerSec), 1)
	}
	return r, nil
}

func (r *run) close() {
	_ = r.audit.Close()
	r.mu.Lock()
	r.confirmed.reset()
	r.mu.Unlock()
}

// markSent and wasSent are the loop guard (run.sent).
func (r *run) markSent(replayID string) { r.sent[maphash.String(r.seed, replayID)] = struct{}{} }
func (r *run) wasSent(replayID string) bool {
	_, ok := r.sent[maphash.String(r.seed, replayID)]
	return ok
}

// halt stops the run for good (the audit log cannot be written).
func (r *run) halt(err error) {
	r.mu.Lock()
	if r.stopErr == nil {
		r.stopErr = err
	}
	r.mu.Unlock()
	r.stop.Store(true)
}

// haltErr is why the run was halted, or nil.
func (r *run) haltErr() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stopErr
}

// key identifies a message across the passes of a run: its id and a hash
// of its body.
func (r *run) key(id string, body []byte) string {
	return id + "\x00" + strconv.FormatUint(maphash.Bytes(r.seed, body), 36)
}

// replayIDFor returns the x-replay-id for a chosen message: the one of an
// earlier copy whose parked original could not be removed (so downstream
// sees the duplicate for what it is), or a new one.
func (r *run) replayIDFor(key string) (string, *pendingCopy) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if pcs := r.outstanding[key]; len(pcs) > 0 {
		pc := pcs[0]
		if len(pcs) == 1 {
			delete(r.outstanding, key)
		} else {
			r.outstanding[key] = pcs[1:]
		}
		return pc.replayID, &pc
	}
	return NewReplayID(), nil
}

// passDone ends a pass. After a lost connection the acks of the last
// removals may not have reached the broker: their messages may be parked
// again, and are re-sent with the same x-replay-id if they are.
func (r *run) passDone(lost bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for k, n := range r.failedNow {
		r.failedKeys[k] += n
	}
	clear(r.failedNow)
	if lost {
		err := r.confirmed.each(func(k string, pc pendingCopy) { r.outstanding[k] = append(r.outstanding[k], pc) })
		if err != nil {
			r.s.log.Warn("the copies removed before the connection was lost could not all be read back; a message whose removal did not reach the broker is sent again with a new replay id", "err", err)
		}
	}
	r.confirmed.reset()
}

// full reports whether the run sent its limit of new messages.
func (r *run) full() bool { return r.limit > 0 && r.sentN >= r.limit }

// owes reports whether a message must be sent again (its earlier copy's
// removal may not have reached the broker), limit or not; owesAny whether
// any must.
func (r *run) owes(key string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.outstanding[key]) > 0
}

func (r *run) owesAny() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.outstanding) > 0
}

// takeFailed reports (and uses up) a failure of this message in an earlier
// pass of the run (or an earlier canary step): it is not tried again after
// a reconnect.
func (r *run) takeFailed(key string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.failedKeys[key] > 0 {
		r.failedKeys[key]--
		return true
	}
	return false
}

func (r *run) failedFor(j *job, err error) {
	r.mu.Lock()
	r.failedNow[j.key]++
	r.mu.Unlock()
	if r.earlier != nil {
		r.earlier.add(j.key)
	}
	if j.counted {
		// Already counted as done in an earlier pass; this re-send of a
		// possibly returned message did not go through, and it is parked.
		r.tally.note(Note{Kind: NoteResentUnconfirmed, ID: j.id, Err: err})
		return
	}
	var dest *retrycore.Destination
	if j.dest != (retrycore.Destination{}) {
		dest = &j.dest
	}
	r.tally.failed(j.id, err, dest, j.replayID)
}

// doneFor records a removal; it reports whether to count it (a re-send of
// an already counted message is not counted again).
func (r *run) doneFor(j *job) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if j.replayID != "" {
		r.confirmed.add(j.key, pendingCopy{id: j.id, replayID: j.replayID, counted: true})
	}
	return !j.counted
}

func (r *run) notRemoved(j *job, err error) {
	r.mu.Lock()
	r.outstanding[j.key] = append(r.outstanding[j.key], pendingCopy{id: j.id, replayID: j.replayID})
	r.mu.Unlock()
	r.s.log.Warn("copy confirmed but the parked message could not be removed; it will be sent again with the same replay id", "id", j.id, "replay_id", j.replayID, "err", err)
}

// leftovers reports copies delivered whose parked original is still there
// at the end of the run.
func (r *run) leftovers() {
	r.mu.Lock()
	var left []pendingCopy
	for _, pcs := range r.outstanding {
		for _, pc := range pcs {
			if !pc.counted { // counted ones were removed after all: never seen again
				left = append(left, pc)
			}
		}
	}
	r.outstanding = map[string][]pendingCopy{}
	r.mu.Unlock()
	for _, pc := range left {
		r.tally.failed(pc.id, fmt.Errorf("a copy was delivered (x-replay-id %s) but the parked message could not be removed: it is still parked", pc.replayID), nil, pc.replayID)
	}
}

// readAhead is how many jobs the producer prepares ahead of the publish
// loop. After a lost consuming connection those already prepared are still
// sent, and their parked copies cannot be acked: with the window, the most
// duplicates one fault makes.
const readAhead = 256

// produce feeds jobs into the channel; it returns when done or on error.
type producer func(ctx context.Context, jobs chan<- *job) error

// execute runs one producer through the publish loop and the committer
// and returns the producer's error once every job it produced is settled
// and committed.
func (r *run) execute(ctx context.Context, pub *publisher, produce producer) error {
	var open atomic.Int64
	com := newCommitter(r, r.kind, &open)
	jobs := make(chan *job, r.readAhead)
	pctx, cancel := context.WithCancel(ctx)
	defer cancel()
	perr := make(chan error, 1)
	go func() {
		defer close(jobs)
		perr <- produce(pctx, jobs)
	}()
	left := r.loop(ctx, pub, jobs, com, &open)
	cancel()
	// Jobs chosen but never sent (interrupted, or halted): nothing
	// happened to them, so they get no audit entry and are no failure
	// (README, the audit log); their parked copies are given back.
	n := len(left)
	for range jobs {
		n++
	}
	r.tally.notSent(n)
	com.finish()
	return <-perr
}

// addReport adds one pass's report to the run's.
func addReport(total *broker.PassReport, rep broker.PassReport) {
	total.Seen += rep.Seen
	total.Taken += rep.Taken
	total.GivenBack += rep.GivenBack
	total.Refreshed += rep.Refreshed
	total.Notes = appendOnce(total.Notes, rep.Notes...)
}
