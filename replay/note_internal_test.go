package replay

import (
	"errors"
	"testing"

	"github.com/parkinglot/parkinglot/broker"
)

// TestAppendOnceTellsANoteOnce: a note every pass of a run repeats (the
// quorum limit, a management API error made anew by each pass) is kept
// once; notes that differ are all kept.
func TestAppendOnceTellsANoteOnce(t *testing.T) {
	limit := broker.Note{Kind: broker.NoteQuorumLimit, Limit: broker.DeliveryLimit{Limit: 20, Source: "policy p"}}
	down := func() broker.Note { return broker.Note{Kind: broker.NoteManagementFailed, Err: errors.New("down")} }
	var notes []Note
	for range 3 {
		notes = appendOnce(notes, passNotes([]broker.Note{limit, down()})...)
	}
	notes = appendOnce(notes, Note{Kind: NoteError, Err: errors.New("down")}, Note{Kind: NoteError})
	if len(notes) != 4 {
		t.Fatalf("kept %d notes, want 4 (the limit, the pass's API error, the run's error, one without an error): %+v", len(notes), notes)
	}
	pass := appendOnce(nil, limit, down(), limit, down())
	if len(pass) != 2 {
		t.Errorf("a pass report kept %d notes, want 2: %+v", len(pass), pass)
	}
}
