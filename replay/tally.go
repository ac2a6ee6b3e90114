package replay

import (
	"sync"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/retrycore"
)

// tally counts a run's outcomes and turns them into progress events. The
// reader, the publish loop and the committer all report to it.
type tally struct {
	mu    sync.Mutex
	res   Result
	total int
	// expected is the selection's size where known before the run reads
	// it (the plan's count, the queue's depth for all): progress counts
	// toward it, not toward what was read ahead so far.
	expected int
	progress func(Event)
}

func newTally(progress func(Event)) *tally { return &tally{progress: progress} }

func (t *tally) emitLocked(e Event) {
	if t.progress == nil {
		return
	}
	// A failure of a message never chosen (an id the queue does not
	// hold) counts in Done: Total is never below it.
	e.Done = t.res.Done + t.res.Failed
	e.Total = max(t.total, e.Done, t.expected)
	t.progress(e)
}

// expect sets the selection's size, known before it is read (0: not).
func (t *tally) expect(n int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.expected = max(n, 0)
}

// chosen counts a message the run will act on.
func (t *tally) chosen(id string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.total++
	t.emitLocked(Event{Kind: EventPlanned, ID: id})
}

// done counts a message done (kind: replayed, deleted, exported, imported)
// and the retry counters its copy reset.
func (t *tally) done(kind EventKind, id string, dest *retrycore.Destination, replayID string, resets []string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.res.Done++
	for _, r := range resets {
		if t.res.Resets == nil {
			t.res.Resets = map[string]int{}
		}
		t.res.Resets[r]++
	}
	t.emitLocked(Event{Kind: kind, ID: id, Destination: dest, ReplayID: replayID, Resets: resets})
}

// failed counts a message that was not done; it stays where it was.
func (t *tally) failed(id string, err error, dest *retrycore.Destination, replayID string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.res.Failed++
	reason := err.Error()
	if len(t.res.Failures) > 0 && reason != t.res.Failures[0].Err {
		t.res.mixedReasons = true
	}
	if len(t.res.Failures) < MaxListedFailures {
		t.res.Failures = append(t.res.Failures, Failure{ID: id, Err: reason, Code: failureCode(err)})
	}
	t.emitLocked(Event{Kind: EventFailed, ID: id, Destination: dest, ReplayID: replayID, Err: reason, Code: failureCode(err)})
}

// notSent counts messages chosen but never sent: the run stopped first.
func (t *tally) notSent(n int) {
	if n == 0 {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.res.NotSent += n
}

// notFound counts a requested id no pass found as failed.
func (t *tally) notFound(id string, err error) {
	t.failed(id, err, nil, "")
	t.mu.Lock()
	t.res.notFound++
	t.mu.Unlock()
}

// skipped counts a message left alone on purpose (loop guard, filter error).
func (t *tally) skipped(id, why string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.res.Skipped++
	t.emitLocked(Event{Kind: EventSkipped, ID: id, Text: why})
}

func (t *tally) dryRun(id string, dest *retrycore.Destination, route *RoutePreview, resets []string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.emitLocked(Event{Kind: EventDryRun, ID: id, Destination: dest, Route: route, Resets: resets})
}

func (t *tally) note(n Note) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.res.Notes = append(t.res.Notes, n)
	t.emitLocked(Event{Kind: EventNote, Note: &n})
}

// routeNote tells of a route that warns (RoutePreview.Warns), for the
// caller to word.
func (t *tally) routeNote(rp RoutePreview) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.res.Routes = append(t.res.Routes, rp)
	t.emitLocked(Event{Kind: EventNote, Route: &rp})
}

func (t *tally) waiting() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.emitLocked(Event{Kind: EventRateLimit})
}

// pass adds a browse pass's report.
func (t *tally) pass(rep broker.PassReport) {
	t.mu.Lock()
	defer t.mu.Unlock()
	addReport(&t.res.Pass, rep)
	t.res.Notes = appendOnce(t.res.Notes, passNotes(rep.Notes)...)
}

// finish emits the final event and returns the result.
func (t *tally) finish() Result {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.emitLocked(Event{Kind: EventFinished})
	return t.res
}
