package cli

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/replay"
	"github.com/parkinglot/parkinglot/retrycore"
)

// `list Q -o json` prints one JSON line a message on stdout, and the
// browse's notes (what it did about a quorum queue's delivery limit) on
// stderr, each "note: …"; the engine's part is broker's
// TestBrowseQuorumParkingLotListedBySessions100Times.
func TestListJSONAndNotes(t *testing.T) {
	const note = "quorum queue with delivery limit 3 (x-delivery-limit argument): messages within one give-back of it are refreshed (re-published, confirmed) instead of given back"
	s := &fakeSession{browse: func(o replay.BrowseOptions) (*replay.Browse, error) {
		if o.Queue != "parking" || !o.StreamOnly || o.OnBatch == nil {
			t.Errorf("browse options %+v; want a streamed browse of parking", o)
		}
		o.OnBatch([]replay.Summary{{ID: "m-1", Exchange: "orders", RoutingKey: "created", BodySize: 2}})
		o.OnBatch([]replay.Summary{{ID: "m-2", Exchange: "orders", RoutingKey: "created", BodySize: 3}})
		limit := broker.DeliveryLimit{Limit: 3, Source: "x-delivery-limit argument"}
		return &replay.Browse{Notes: []replay.Note{{Kind: replay.NotePass, Pass: broker.Note{Kind: broker.NoteQuorumLimit, Limit: limit}}}}, nil
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

// `list Q --limit 5` asks the engine for 5 and prints a table: a header
// and a row a message. (replay's TestListLimitAndQueues checks the limit
// on a broker.)
func TestListLimitTable(t *testing.T) {
	s := &fakeSession{browse: func(o replay.BrowseOptions) (*replay.Browse, error) {
		if o.Limit != 5 {
			t.Errorf("limit %d, want 5", o.Limit)
		}
		for i := range o.Limit {
			o.OnBatch([]replay.Summary{{ID: fmt.Sprintf("m-%05d", i), BodySize: 10, Facts: retrycore.Facts{Error: "boom"}}})
		}
		return &replay.Browse{}, nil
	}}
	f, b := fakeFactory(t, s)
	if code := run(context.Background(), f, []string{"list", "orders.dlq", "--limit", "5"}); code != 0 {
		t.Fatalf("exit %d, stderr %q", code, b.err.String())
	}
	var lines []string
	for _, l := range strings.Split(b.out.String(), "\n") {
		if strings.TrimSpace(l) != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) != 6 || !strings.HasPrefix(lines[0], "ID ") || !strings.HasPrefix(lines[1], "m-00000") {
		t.Errorf("list --limit 5:\n%s", b.out.String())
	}
}
