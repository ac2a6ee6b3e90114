package replay

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/parkinglot/parkinglot/broker/store"
	"github.com/parkinglot/parkinglot/retrycore"
)

// DefaultCanaryWait is how long a canary's messages are watched when
// nothing says how long the pipeline takes to retry and park a message.
const DefaultCanaryWait = 2 * time.Minute

// CanaryOptions are a replay that starts small: each step replays the
// first Steps[i] messages of the selection, then watches the parking lot
// for Wait; only when none of them came back does the next step, and at
// last the rest, go.
type CanaryOptions struct {
	Options
	Steps []int
	Wait  time.Duration // DefaultCanaryWait when 0
	// Poll is how often the parking lot is browsed for returns (2s when 0).
	Poll time.Duration
	// OnStep hears each step once its wait ended.
	OnStep func(CanaryStep)
	// OnWait hears, while a step waits, how long is left and what came
	// back so far (st: the step as it stands).
	OnWait func(left time.Duration, st CanaryStep)
	// Proceed, when set, is asked after each step none of whose messages
	// came back whether to go on (the TUI's "replay the rest" or "stop");
	// false ends the run with ErrCanaryStopped, the rest parked. It may
	// block until a person answers; ctx's end is an interruption.
	Proceed func(ctx context.Context, st CanaryStep) bool
}

// ErrCanaryStopped: the person chose to stop after a canary step; the
// rest of the selection stays parked.
var ErrCanaryStopped = errors.New("stopped after a canary step; the rest stay parked")

// CanaryInterruptedError: the run was interrupted (Ctrl-C) while a step
// waited; nothing was in flight, so every message is replayed or parked.
type CanaryInterruptedError struct {
	Step     int
	Replayed int // by the whole run
	Err      error
}

func (e *CanaryInterruptedError) Error() string {
	return fmt.Sprintf("interrupted while watching canary step %d: %d message(s) replayed, the rest stay parked", e.Step, e.Replayed)
}

func (e *CanaryInterruptedError) Unwrap() error { return e.Err }

// CanaryStep is what one step did and saw.
type CanaryStep struct {
	Run      string         `json:"run"`
	Step     int            `json:"step"` // 1-based
	Replayed int            `json:"replayed"`
	CameBack int            `json:"came_back"`
	Groups   map[string]int `json:"groups,omitempty"` // the came-back messages by error group
	Waited   time.Duration  `json:"waited_ns"`
	// Watched: the copies watched in the step's wait, its own and the
	// earlier steps' (one that fails late comes back in a later step's
	// wait); CameBack counts those back. Last, so that the fields before
	// it read as they did.
	Watched int `json:"watched"`
}

// ErrCameBack: some messages of a canary step came back to the parking
// lot; the rest of the selection was not replayed and stays parked.
var ErrCameBack = errors.New("replayed messages came back to the parking lot")

// CameBackError is ErrCameBack with the step that saw it.
type CameBackError struct{ Step CanaryStep }

func (e *CameBackError) Error() string {
	groups := slices.Sorted(maps.Keys(e.Step.Groups))
	steps := fmt.Sprintf("canary step %d", e.Step.Step)
	if e.Step.Watched > e.Step.Replayed { // some are the earlier steps'
		steps = fmt.Sprintf("canary steps 1–%d", e.Step.Step)
	}
	return fmt.Sprintf("%d of %d message(s) of %s came back (%s); the rest stay parked",
		e.Step.CameBack, max(e.Step.Watched, e.Step.Replayed), steps, strings.Join(groups, "; "))
}

func (e *CameBackError) Unwrap() error { return ErrCameBack }

// ParseRamp reads --ramp's "1,10,100": positive, growing step sizes.
func ParseRamp(s string) ([]int, error) {
	var steps []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("%w: ramp %q: want positive whole numbers separated by commas (1,10,100)", ErrBadSelection, s)
		}
		if len(steps) > 0 && n < steps[len(steps)-1] {
			return nil, fmt.Errorf("%w: ramp %q: each step at least as large as the one before", ErrBadSelection, s)
		}
		steps = append(steps, n)
	}
	return steps, nil
}

// CanaryNoneReplayedError: no message of a canary step could be replayed
// (each failed, and is in the Result's failures); nothing was tested, so
// the rest of the selection stays parked. It wraps ErrNotAllDone.
type CanaryNoneReplayedError struct {
	Step   int
	Failed int
}

func (e *CanaryNoneReplayedError) Error() string {
	return fmt.Sprintf("none of the %d message(s) of canary step %d could be replayed; the rest stay parked", e.Failed, e.Step)
}

func (e *CanaryNoneReplayedError) Unwrap() error { return ErrNotAllDone }

// Canary replays o's selection step by step (package doc, "Canary replays and runs").
// Each step is a plain replay of the selection limited to the first
// Steps[i] messages it can send, with every guarantee of one; between
// steps nothing is in flight, so a cancelled wait leaves every message
// replayed or parked. A message that failed in a step is not tried again
// by the next ones. A step whose messages come back (found by their
// x-replay-id in a harmless browse of the parking lot) ends the run with a
// *CameBackError, one that could replay none of its messages with a
// *CanaryNoneReplayedError; the Result counts what every step did.
func (s *Session) Canary(ctx context.Context, o CanaryOptions) (Result, []CanaryStep, error) {
	if o.Wait <= 0 {
		o.Wait = DefaultCanaryWait
	}
	if o.Poll <= 0 {
		o.Poll = 2 * time.Second
	}
	if o.Run == "" {
		o.Run = NewRunID() // every step's copies carry one run (x-replay-run)
	}
	if len(o.Select.IDs) > 0 && o.Select.Chosen == nil {
		// One id set for every step: what a step found is known to the
		// next by its position in it (earlierSteps.found), and a set's
		// positions are its own.
		ids, err := idSetOf(o.Select.IDs)
		if err != nil {
			return Result{}, nil, err
		}
		defer ids.Close()
		o.Select.IDs, o.Select.Chosen = nil, ids
	}
	total := Result{Run: o.Run}
	var steps []CanaryStep
	progress := o.Progress
	earlier := newEarlierSteps()
	// watched: the replay ids of every step so far. A copy of an earlier
	// step that fails after that step's wait comes back in a later one's
	// and stops the run as well.
	watched := map[string]bool{}
	// left is what o.Limit lets the steps and the rest still send.
	left := func() int {
		if o.Limit <= 0 {
			return 0
		}
		return max(o.Limit-total.sent, 0)
	}
	for i, n := range o.Steps {
		if o.Limit > 0 && left() == 0 {
			return total, steps, nil
		}
		step := o.Options
		step.earlier, step.Limit = earlier, bound(n, left())
		rids := map[string]bool{}
		base := total.Done + total.Failed // counted on from the steps before
		step.Progress = func(e Event) {
			if e.Kind == EventReplayed && e.ReplayID != "" {
				rids[e.ReplayID] = true
				watched[e.ReplayID] = true
			}
			if progress != nil && e.Kind != EventFinished {
				e.Done, e.Total = e.Done+base, e.Total+base
				progress(e)
			}
		}
		res, err := s.Replay(ctx, step)
		add(&total, res)
		if err == nil && ctx.Err() != nil { // interrupted once its selection was read
			err = context.Cause(ctx)
		}
		if err != nil {
			return total, steps, err
		}
		if len(rids) == 0 {
			if res.Failed > res.notFound { // ids not in the queue were not tried: nothing failed
				return total, steps, &CanaryNoneReplayedError{Step: i + 1, Failed: res.Failed}
			}
			break // nothing left to replay
		}
		st := CanaryStep{Run: o.Run, Step: i + 1, Replayed: len(rids), Watched: len(watched), Groups: map[string]int{}}
		start := time.Now()
		interrupted := func() error {
			return &CanaryInterruptedError{Step: st.Step, Replayed: total.Done, Err: context.Cause(ctx)}
		}
		for {
			back, err := s.cameBack(ctx, o.Queue, watched)
			if err != nil {
				if ctx.Err() != nil {
					return total, steps, interrupted()
				}
				return total, steps, err
			}
			st.CameBack, st.Groups = 0, back
			for _, n := range back {
				st.CameBack += n
			}
			left := o.Wait - time.Since(start)
			if st.CameBack == len(watched) || left <= 0 {
				break
			}
			if o.OnWait != nil {
				o.OnWait(left, st)
			}
			select {
			case <-ctx.Done():
				return total, steps, interrupted()
			case <-time.After(min(o.Poll, left)):
			}
		}
		st.Waited = time.Since(start)
		steps = append(steps, st)
		if o.OnStep != nil {
			o.OnStep(st)
		}
		if st.CameBack > 0 {
			return total, steps, &CameBackError{Step: st}
		}
		if o.Proceed != nil && !o.Proceed(ctx, st) {
			if ctx.Err() != nil {
				return total, steps, interrupted()
			}
			return total, steps, ErrCanaryStopped
		}
	}
	if o.Limit > 0 && left() == 0 {
		return total, steps, nil
	}
	rest := o.Options
	rest.earlier, rest.Limit = earlier, left()
	if progress != nil {
		base := total.Done + total.Failed
		rest.Progress = func(e Event) {
			e.Done, e.Total = e.Done+base, e.Total+base
			progress(e)
		}
	}
	res, err := s.Replay(ctx, rest)
	add(&total, res)
	return total, steps, err
}

// bound is the tighter of two limits (0: none).
func bound(a, b int) int {
	if a <= 0 || (b > 0 && b < a) {
		return b
	}
	return a
}

// earlierSteps is what a canary run's earlier steps did, for the next
// step's run: what failed, by run key and count (run.failedKeys), and the
// loop guard (run.sent: a copy that came back after its step's wait is not
// replayed again in the same run). The steps' runs share its seed so that
// their keys and hashes agree, and run one after another, so sent needs
// no lock.
type earlierSteps struct {
	seed maphash.Seed
	sent map[uint64]struct{}
	mu   sync.Mutex
	keys map[string]int
	// found: the requested ids an earlier step found, by position in the
	// id set every step shares (Canary): an id a step replayed whole is
	// not missing from the next.
	found store.BitSet
}

func newEarlierSteps() *earlierSteps {
	return &earlierSteps{seed: maphash.MakeSeed(), sent: map[uint64]struct{}{}, keys: map[string]int{}}
}

func (f *earlierSteps) add(key string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.keys[key]++
}

// seedFound marks in sel the ids earlier steps found.
func (f *earlierSteps) seedFound(sel *selection) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := range f.found.All() {
		sel.found.Put(i, true)
	}
}

// keepFound adds the ids sel found to those of the earlier steps.
func (f *earlierSteps) keepFound(sel *selection) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := range sel.found.All() {
		f.found.Put(i, true)
	}
}

// counts is a copy for one run, which uses it up as it passes them over.
func (f *earlierSteps) counts() map[string]int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return maps.Clone(f.keys)
}

// cameBack browses the parking lot, harmlessly, for the messages that
// carry one of the replay ids, and counts them by error group.
func (s *Session) cameBack(ctx context.Context, queue string, rids map[string]bool) (map[string]int, error) {
	groups := map[string]int{}
	seen := map[string]bool{}
	_, err := s.Browse(ctx, BrowseOptions{Queue: queue, StreamOnly: true, OnBatch: func(batch []Summary) {
		for _, sum := range batch {
			if rid := sum.Facts.ReplayID; rids[rid] && !seen[rid] {
				seen[rid] = true
				groups[sum.Group]++
			}
		}
	}})
	return groups, err
}

// add counts res into total.
func add(total *Result, res Result) {
	addReport(&total.Pass, res.Pass)
	total.Done += res.Done
	total.Failed += res.Failed
	total.NotSent += res.NotSent
	total.notFound += res.notFound
	total.sent += res.sent
	total.Skipped += res.Skipped
	total.Failures = append(total.Failures, res.Failures[:min(len(res.Failures), max(MaxListedFailures-len(total.Failures), 0))]...)
	for k, v := range res.Resets {
		if total.Resets == nil {
			total.Resets = map[string]int{}
		}
		total.Resets[k] += v
	}
	total.Notes = appendOnce(total.Notes, res.Notes...) // every step's run tells the same ones
}

// CanaryWaitFor is how long a message of p can take from its replay to
// the parking lot at worst: every attempt's handler timeout and every
// retry's delay, plus 10 s for the broker's dead-lettering.
func CanaryWaitFor(p retrycore.Pipeline) time.Duration {
	w := time.Duration(p.MaxRetries+1)*p.HandlerTimeout.D + 10*time.Second
	for n := 1; n <= p.MaxRetries; n++ {
		w += p.Tier(n).Delay.D
	}
	return w
}
