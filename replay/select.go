package replay

import (
	"fmt"
	"time"

	"github.com/parkinglot/parkinglot/broker"
)

// selection applies a Selector to the messages of a pass.
type selection struct {
	ids    map[string]bool // requested ids; nil: no id selection
	found  map[string]bool // requested ids seen in the current pass
	all    bool
	filter *Filter
}

// newSelection checks a Selector: exactly one of IDs, All and Filter (IDs
// and Filter may combine: both must match). With needOne false an empty
// selector selects everything (list, export).
func newSelection(sel Selector, needOne bool) (*selection, error) {
	f, err := CompileFilter(sel.Filter)
	if err != nil {
		return nil, err
	}
	s := &selection{all: sel.All, filter: f, found: map[string]bool{}}
	if len(sel.IDs) > 0 {
		s.ids = make(map[string]bool, len(sel.IDs))
		for _, id := range sel.IDs {
			if id == "" {
				return nil, fmt.Errorf("%w: an empty id", ErrBadSelection)
			}
			s.ids[id] = true
		}
	}
	switch {
	case sel.All && (s.ids != nil || f != nil):
		return nil, fmt.Errorf("%w: all selects every message; do not combine it with ids or a filter", ErrBadSelection)
	case needOne && !sel.All && s.ids == nil && f == nil:
		return nil, fmt.Errorf("%w: no messages chosen: give ids, all or a filter", ErrBadSelection)
	case !needOne && s.ids == nil && f == nil:
		s.all = true
	}
	return s, nil
}

// newPass starts counting found ids afresh (a reconnect opens a new pass).
func (s *selection) newPass() { s.found = map[string]bool{} }

// match decides whether a message is chosen.
func (s *selection) match(m broker.Message, sum Summary, queue string, now time.Time) (bool, error) {
	if s.ids != nil {
		if !s.ids[sum.ID] || s.found[sum.ID] {
			return false, nil
		}
	}
	ok, err := s.filter.Match(m, sum, queue, now)
	if err != nil || !ok {
		return false, err
	}
	if s.ids != nil {
		s.found[sum.ID] = true
	}
	return true, nil
}

// finish removes an id from the request once it is done for good, so a
// later pass does not look for it again.
func (s *selection) finish(id string) {
	if s.ids != nil {
		delete(s.ids, id)
	}
}

// complete reports whether every requested id was found in this pass, so
// the pass can stop early.
func (s *selection) complete() bool {
	if s.ids == nil {
		return false
	}
	for id := range s.ids {
		if !s.found[id] {
			return false
		}
	}
	return true
}

// missing lists requested ids not found in this pass.
func (s *selection) missing() []string {
	var out []string
	for id := range s.ids {
		if !s.found[id] {
			out = append(out, id)
		}
	}
	return out
}
