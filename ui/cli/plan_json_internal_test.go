package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"testing"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/replay"
	"github.com/parkinglot/parkinglot/retrycore"
)

// TestPlanLineIsTheEncodedPlan: the plan streamed with its items and
// refusals and ids not found read from files is byte for byte the line
// WriteJSONLines writes for the whole plan — with no items, one, many, a
// long one, refusals with and without items, ids not found with and
// without refusals, and a queue whose name holds what the items field
// looks like.
func TestPlanLineIsTheEncodedPlan(t *testing.T) {
	long := string(bytes.Repeat([]byte("e"), 10_000)) // longer than bufio's buffer
	item := func(id, err string) replay.PlanItem {
		return replay.PlanItem{ID: id, Destination: retrycore.Destination{Exchange: "orders", RoutingKey: "order.created"},
			Source: "x-death", FailedQueue: "orders", Error: err, Resets: []string{"x-retry-count"}, CC: []string{"audit"}}
	}
	for name, p := range map[string]replay.Plan{
		"none": {Queue: "orders.dlq", Routes: []replay.RoutePreview{}},
		"one":  {Queue: "orders.dlq", Items: []replay.PlanItem{item("a", "<html> & co")}},
		"many": {Queue: `odd,"items":null,"x`, Items: []replay.PlanItem{item("a", "x"), item("b", long), item("c", "\n")},
			Refused: []replay.Failure{{ID: "d", Err: "no origin"}}, Missing: []string{"e"}, Skipped: 2,
			Resets: map[string]int{"x-retry-count": 3}, Notes: []replay.Note{{Kind: replay.NoteError, Err: errors.New("n")}},
			Report: broker.PassReport{Seen: 6, Notes: []broker.Note{{Kind: broker.NoteNoManagement}}}},
		"refused only": {Queue: "orders.dlq", Refused: []replay.Failure{{ID: "a", Err: "no origin"}, {ID: "b", Err: long}}, Missing: []string{"c"}},
		"missing only": {Queue: "orders.dlq", Missing: []string{"a", long, `"q"`}, Routes: []replay.RoutePreview{}},
	} {
		var want bytes.Buffer
		if err := WriteJSONLines(&want, []planJSON{newPlanJSON(p)}); err != nil {
			t.Fatal(err)
		}
		var items, refused, missing bytes.Buffer
		for _, it := range p.Items {
			encodeLine(t, &items, it)
		}
		for _, f := range p.Refused {
			encodeLine(t, &refused, f)
		}
		for _, id := range p.Missing {
			encodeLine(t, &missing, id)
		}
		var got bytes.Buffer
		if err := writePlanLine(&got, p, jsonArray{len(p.Items), bufio.NewReader(&items)}, jsonArray{len(p.Refused), bufio.NewReader(&refused)},
			jsonArray{len(p.Missing), bufio.NewReader(&missing)}); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if g, w := got.Bytes(), want.Bytes(); !bytes.Equal(g, w) {
			at := 0
			for at < min(len(g), len(w)) && g[at] == w[at] {
				at++
			}
			t.Errorf("%s: differs at byte %d of %d (want %d):\n got  …%q\n want …%q", name, at, len(g), len(w),
				g[max(at-40, 0):min(at+40, len(g))], w[max(at-40, 0):min(at+40, len(w))])
		}
	}
}

func encodeLine(t *testing.T, w *bytes.Buffer, v any) {
	t.Helper()
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
}

// TestPlanJSONNotes: a plan's notes, and its pass's, are worded where the
// plan's own fields put them: "notes" then "pass", the pass's "notes" last.
func TestPlanJSONNotes(t *testing.T) {
	p := replay.Plan{Queue: "q", Notes: []replay.Note{{Kind: replay.NoteError, Err: errors.New("boom")}},
		Report: broker.PassReport{Seen: 1, GivenBack: 1, Notes: []broker.Note{{Kind: broker.NoteNoManagement}}}}
	var got bytes.Buffer
	if err := writePlanLine(&got, p, jsonArray{}, jsonArray{}, jsonArray{}); err != nil {
		t.Fatal(err)
	}
	want := `{"queue":"q","items":null,"routes":null,"notes":["boom"],"pass":{"seen":1,"taken":0,"given_back":1,"refreshed":0,` +
		`"notes":["no management API: queue type and delivery limit unknown; quorum messages seen redelivered are refreshed before a give-back"]}}` + "\n"
	if got.String() != want {
		t.Errorf("got  %s\nwant %s", got.String(), want)
	}
}

// TestJSONSpoolLeavesNoName: the spool's name is gone from the temporary
// directory once it is open (a plan killed midway leaves nothing there),
// and it still reads back what was added.
func TestJSONSpoolLeavesNoName(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("TMPDIR", dir)
	j, err := newJSONSpool()
	if err != nil {
		t.Fatal(err)
	}
	defer j.remove()
	if err := j.add("a"); err != nil {
		t.Fatal(err)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("the spool left %d name(s) in %s", len(left), dir)
	}
	a, err := j.rewind()
	if err != nil {
		t.Fatal(err)
	}
	if line, _ := a.lines.ReadString('\n'); a.n != 1 || line != "\"a\"\n" {
		t.Errorf("read back %d value(s), first %q", a.n, line)
	}
}
