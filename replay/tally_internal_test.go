package replay

import (
	"errors"
	"testing"
)

// TestTallyNeverSaysMoreDoneThanTotal: a failure of a message never
// chosen (an id the queue does not hold) is counted in Done, and Total
// keeps up with it ("1 of 0" was printed).
func TestTallyNeverSaysMoreDoneThanTotal(t *testing.T) {
	var events []Event
	tl := newTally(func(e Event) { events = append(events, e) })
	tl.failed("nope", errors.New("no message"), nil, "")
	tl.chosen("a")
	tl.done(EventDeleted, "a", nil, "", nil)
	for _, e := range events {
		if e.Done > e.Total {
			t.Errorf("%s %s: done %d of %d", e.Kind, e.ID, e.Done, e.Total)
		}
	}
	if last := events[len(events)-1]; last.Done != 2 || last.Total != 2 {
		t.Errorf("last event %d of %d, want 2 of 2", last.Done, last.Total)
	}
}
