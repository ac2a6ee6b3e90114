package cli

import (
	"context"
	"strings"
	"testing"

	"github.com/parkinglot/parkinglot/replay"
)

// `list Q -o json` prints one JSON line a message on stdout, and the
// browse's notes (what it did about a quorum queue's delivery limit) on
// stderr, each "note: …"; the engine's part is broker's
// TestBrowseQuorumParkingLotListedBySessions100Times.
func TestListJSONAndNotes(t *testing.T) {
	const note = "quorum queue with delivery limit 3: messages near the limit were refreshed (given back to the tail)"
	s := &fakeSession{browse: func(o replay.BrowseOptions) (*replay.Browse, error) {
		if o.Queue != "parking" || !o.StreamOnly || o.OnBatch == nil {
			t.Errorf("browse options %+v; want a streamed browse of parking", o)
		}
		o.OnBatch([]replay.Summary{{ID: "m-1", Exchange: "orders", RoutingKey: "created", BodySize: 2}})
		o.OnBatch([]replay.Summary{{ID: "m-2", Exchange: "orders", RoutingKey: "created", BodySize: 3}})
		return &replay.Browse{Notes: []string{note}}, nil
	}}
	f, b := fakeFactory(t, s)
	if code := run(context.Background(), f, []string{"list", "parking", "-o", "json"}); code != 0 {
		t.Fatalf("exit %d, stderr %q", code, b.err.String())
	}
	lines := strings.Split(strings.TrimSpace(b.out.String()), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], `{"id":"m-1",`) || !strings.HasPrefix(lines[1], `{"id":"m-2",`) {
		t.Errorf("stdout %q; want one JSON line a message, in order", b.out.String())
	}
	if b.err.String() != "note: "+note+"\n" {
		t.Errorf("stderr %q; want the note", b.err.String())
	}
	if !s.closed {
		t.Error("the session was not closed")
	}
}
