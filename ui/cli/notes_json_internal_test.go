package cli

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/replay"
)

// TestNotesInJSONKeepTheirPlace: a run's result and a run's status put
// their notes, worded, where the engine's own fields once put them: a
// result's after its pass (whose notes come last) and before its run id,
// a status's last.
func TestNotesInJSONKeepTheirPlace(t *testing.T) {
	pass := broker.PassReport{Seen: 2, Taken: 2, Notes: []broker.Note{{Kind: broker.NoteNoManagement}}}
	res := replay.Result{Done: 2, Pass: pass, Run: "r1",
		Notes: []replay.Note{{Kind: replay.NoteReconnect, Err: errors.New("connection lost")}, {Kind: replay.NotePass, Pass: pass.Notes[0]}}}
	rj := newResultJSON(res)
	rj.Interrupted = true
	noAPI := "no management API: queue type and delivery limit unknown; quorum messages seen redelivered are refreshed before a give-back"
	var got bytes.Buffer
	if err := WriteJSONLines(&got, []ResultJSON{rj}); err != nil {
		t.Fatal(err)
	}
	want := `{"event":"finished","done":2,"failed":0,"skipped":0,"pass":{"seen":2,"taken":2,"given_back":0,"refreshed":0,"notes":["` + noAPI + `"]},` +
		`"notes":["connection lost; reconnecting and carrying on","` + noAPI + `"],"run":"r1","interrupted":true}` + "\n"
	if got.String() != want {
		t.Errorf("result\n got  %s\n want %s", got.String(), want)
	}

	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	st := replay.RunStatus{Run: "r1", Replayed: 2, From: []string{"q"}, First: at, Last: at, Watched: []string{"q"},
		Notes: []replay.Note{{Kind: replay.NoteError, Err: errors.New("down")}}}
	got.Reset()
	if err := WriteJSONLines(&got, []statusJSON{newStatusJSON(st)}); err != nil {
		t.Fatal(err)
	}
	want = `{"run":"r1","replayed":2,"from":["q"],"first_replayed_at":"2026-01-02T03:04:05Z","last_replayed_at":"2026-01-02T03:04:05Z",` +
		`"watched":["q"],"came_back":0,"same_error":0,"notes":["down"]}` + "\n"
	if got.String() != want {
		t.Errorf("status\n got  %s\n want %s", got.String(), want)
	}
}
