package replay

import (
	"fmt"
	"time"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/replay/bitset"
)

// selection applies a Selector to the messages of a pass. A selection by
// id keeps a bit a chosen id for "seen in this pass" and "done for good",
// positions in its IDSet, so that it does not grow a map with what it
// finds.
type selection struct {
	ids    *IDSet // requested ids; nil: no id selection
	owned  bool   // ids was built here from Selector.IDs: closed with the selection
	found  bitset.Set
	done   bitset.Set
	all    bool
	filter *Filter
}

// noPos is the position of a message chosen by something other than its id.
const noPos = -1

// newSelection checks a Selector: exactly one of IDs (or Chosen), All and
// Filter (IDs and Filter may combine: both must match). With needOne false
// an empty selector selects everything (list, export). Close it when done.
func newSelection(sel Selector, needOne bool) (*selection, error) {
	f, err := CompileFilter(sel.Filter)
	if err != nil {
		return nil, err
	}
	s := &selection{all: sel.All, filter: f, ids: sel.Chosen}
	switch {
	case len(sel.IDs) > 0 && sel.Chosen != nil:
		return nil, fmt.Errorf("%w: ids given twice (IDs and Chosen)", ErrBadSelection)
	case len(sel.IDs) > 0:
		if s.ids, err = IDSetOf(sel.IDs...); err != nil {
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

// close releases the id set the selection built itself.
func (s *selection) close() {
	if s.owned {
		s.ids.Close()
	}
}

// newPass starts counting found ids afresh (a reconnect opens a new pass).
func (s *selection) newPass() { s.found.Clear() }

// match decides whether a message is chosen; pos is its place in the id
// set (noPos without one).
func (s *selection) match(m broker.Message, sum Summary, queue string, now time.Time) (pos int, ok bool, err error) {
	pos = noPos
	if s.ids != nil {
		i, in, err := s.ids.index(sum.ID)
		if err != nil || !in || s.done.Has(i) || s.found.Has(i) {
			return noPos, false, err
		}
		pos = i
	}
	ok, err = s.filter.Match(m, sum, queue, now)
	if err != nil || !ok {
		return noPos, false, err
	}
	if pos != noPos {
		s.found.Put(pos, true)
	}
	return pos, true, nil
}

// finish marks the id at pos done for good, so a later pass does not look
// for it again.
func (s *selection) finish(pos int) {
	if s.ids != nil && pos >= 0 {
		s.done.Put(pos, true)
	}
}

// remaining is how many requested ids are not done yet.
func (s *selection) remaining() int { return s.ids.Len() - s.done.Len() }

// complete reports whether every requested id was found in this pass, so
// the pass can stop early.
func (s *selection) complete() bool {
	// found holds only ids not done: match passes over done ones.
	return s.ids != nil && s.found.Len() == s.remaining()
}

// missing yields the requested ids not found in this pass (and not done).
func (s *selection) missing(yield func(string, error) bool) {
	if s.ids == nil {
		return
	}
	for i := range s.ids.Len() {
		if s.done.Has(i) || s.found.Has(i) {
			continue
		}
		id, err := s.ids.at(i)
		if !yield(id, err) || err != nil {
			return
		}
	}
}

// reportMissing reports each requested id the pass did not find as not
// done: it is not in the queue.
func reportMissing(sel *selection, t *tally, queue string) error {
	for id, err := range sel.missing {
		if err != nil {
			return err
		}
		t.failed(id, notInQueue(id, queue), nil, "")
	}
	return nil
}

// notInQueue is the failure of a requested id the queue does not hold.
func notInQueue(id, queue string) error {
	return &sentinelError{kind: broker.ErrNotFound, msg: fmt.Sprintf("no message %q in queue %q", id, queue)}
}
