package replay

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/broker/body"
	"github.com/parkinglot/parkinglot/broker/store"
)

// selection applies a Selector to the messages of a pass. A selection by
// id chooses every message that carries a requested id, however many share
// it (package doc, "Identity": acting on an id acts on every message that
// carries it), so a pass by id reads the whole queue. It keeps a bit a
// requested id for "found", positions in its IDSet, so that it does not
// grow a map with what it finds.
type selection struct {
	ids    *store.IDSet // requested ids; nil: no id selection
	owned  bool         // ids was built here from Selector.IDs: closed with the selection
	found  store.BitSet
	all    bool
	filter *Filter
	// capped: the action stopped at its limit; ids it did not reach are
	// not missing.
	capped bool
}

// reached reports, for a message chosen after n others, whether n reach
// limit (0: none), and marks the selection capped when they do: there was
// more than the limit.
func (s *selection) reached(n, limit int) bool {
	if limit > 0 && n >= limit {
		s.capped = true
	}
	return s.capped
}

// newSelection checks a Selector (its filter reads bodies with bodies): exactly one of IDs (or Chosen), All and
// Filter (IDs and Filter may combine: both must match). With needOne false
// an empty selector selects everything (list, export). Close it when done.
func newSelection(sel Selector, needOne bool, bodies *body.Reader) (*selection, error) {
	f, err := CompileFilter(sel.Filter)
	if err != nil {
		return nil, err
	}
	f = f.readingBodies(bodies)
	s := &selection{all: sel.All, filter: f, ids: sel.Chosen}
	switch {
	case len(sel.IDs) > 0 && sel.Chosen != nil:
		return nil, fmt.Errorf("%w: ids given twice (IDs and Chosen)", ErrBadSelection)
	case len(sel.IDs) > 0:
		if s.ids, err = idSetOf(sel.IDs); err != nil {
			return nil, err
		}
		s.owned = true
	case sel.Chosen != nil && sel.Chosen.Len() == 0:
		return nil, fmt.Errorf("%w: no messages chosen", ErrBadSelection)
	}
	switch {
	case sel.All && (s.ids != nil || f != nil):
		s.close()
		return nil, fmt.Errorf("%w: all selects every message; do not combine it with ids or a filter", ErrBadSelection)
	case needOne && !sel.All && s.ids == nil && f == nil:
		return nil, fmt.Errorf("%w: no messages chosen: give ids, all or a filter", ErrBadSelection)
	case !needOne && s.ids == nil && f == nil:
		s.all = true
	}
	return s, nil
}

// idSetOf is the id set of Selector.IDs; a bad id is ErrBadSelection.
func idSetOf(ids []string) (*store.IDSet, error) {
	set, err := store.IDSetOf(ids...)
	if errors.Is(err, store.ErrBadID) {
		err = fmt.Errorf("%w: %w", ErrBadSelection, err)
	}
	return set, err
}

// close releases the id set the selection built itself.
func (s *selection) close() {
	if s.owned {
		s.ids.Close()
	}
}

// match decides whether a message is chosen. Every message carrying a
// requested id is, not only the first one found.
func (s *selection) match(m broker.Message, sum Summary, queue string, now time.Time) (bool, error) {
	pos := -1
	if s.ids != nil {
		i, in, err := s.ids.Index(sum.ID)
		if err != nil || !in {
			return false, err
		}
		pos = i
	}
	ok, err := s.filter.Match(m, sum, queue, now)
	if err != nil || !ok {
		return false, err
	}
	if pos >= 0 {
		s.found.Put(pos, true)
	}
	return true, nil
}

// missing yields the requested ids no pass of the command found: found
// counts across the passes of a run, so an id acted on before a reconnect
// is not reported missing after it.
func (s *selection) missing(yield func(string, error) bool) {
	if s.ids == nil {
		return
	}
	for i := range s.ids.Len() {
		if s.found.Has(i) {
			continue
		}
		id, err := s.ids.At(i)
		if !yield(id, err) || err != nil {
			return
		}
	}
}

// closePass ends an action's pass: it gives back what the pass still
// holds (even when ctx ended), counts it, and reports the requested ids it
// never found. err is the action's own error, which comes first.
func closePass(ctx context.Context, p *broker.Pass, t *tally, sel *selection, queue string, err error) error {
	rep, cerr := p.Close(context.WithoutCancel(ctx))
	t.pass(rep)
	if err == nil {
		err = cerr
		if merr := reportMissing(sel, t, queue); err == nil {
			err = merr
		}
	}
	return err
}

// reportMissing reports each requested id no pass found as not
// done: it is not in the queue.
func reportMissing(sel *selection, t *tally, queue string) error {
	if sel.ids == nil || sel.capped {
		return nil
	}
	for i := range sel.ids.Len() {
		if sel.found.Has(i) {
			continue
		}
		id, err := sel.ids.At(i)
		if err != nil {
			return err
		}
		t.notFound(id, notInQueue(id, queue))
		// Told once: a canary's later steps share the found set, and do
		// not report it again.
		sel.found.Put(i, true)
	}
	return nil
}

// notInQueue is the failure of a requested id the queue does not hold.
func notInQueue(id, queue string) error {
	return &sentinelError{kind: broker.ErrNotFound, msg: fmt.Sprintf("no message %q in queue %q", id, queue)}
}
