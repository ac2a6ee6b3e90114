package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/parkinglot/parkinglot/replay"
	"github.com/parkinglot/parkinglot/retrycore"
)

// Chosen ids the parking lot no longer holds: `replay --dry-run` exits 3;
// -o json lists every one, the text plan names some and counts the rest.
// (replay's TestPlanCountsEveryChosenIDNoLongerParked counts them on a
// broker.)
func TestReplayDryRunIDsNotFound(t *testing.T) {
	const q, gone = "orders.dlq", replay.MaxListedFailures + 150
	to := retrycore.Destination{Exchange: "", RoutingKey: "orders"}
	plan := replay.Plan{
		Items:  []replay.PlanItem{{ID: "m-00000", Destination: to, Source: "headers"}, {ID: "m-00001", Destination: to, Source: "headers"}},
		Routes: []replay.RoutePreview{{Destination: to, Messages: 2, Available: true, Queues: []string{"orders"}}},
	}
	args := []string{"replay", q, "--dry-run", "--id", "m-00000", "--id", "m-00001"}
	for i := range gone {
		id := fmt.Sprintf("gone-%04d", gone-1-i)
		plan.Missing = append(plan.Missing, id)
		args = append(args, "--id", id)
	}
	dryRun := func(t *testing.T, args ...string) string {
		t.Helper()
		s := &fakeSession{planEach: planOf(plan)}
		f, b := fakeFactory(t, s)
		if code := run(context.Background(), f, args); code != 3 {
			t.Fatalf("exit %d, want 3\nstderr %s", code, b.err.String())
		}
		return b.out.String()
	}

	js := dryRun(t, append(args, "-o", "json")...)
	var got struct {
		Items   []json.RawMessage `json:"items"`
		Missing []string          `json:"missing"`
	}
	if err := json.Unmarshal([]byte(js), &got); err != nil {
		t.Fatalf("-o json: %v\n%s", err, js)
	}
	if len(got.Items) != 2 || len(got.Missing) != gone || got.Missing[0] != plan.Missing[0] || got.Missing[gone-1] != plan.Missing[gone-1] {
		t.Fatalf("-o json: %d items, %d missing; want 2 and all %d, in order", len(got.Items), len(got.Missing), gone)
	}
	text := dryRun(t, args...)
	if !strings.Contains(text, "not found: gone-") || !strings.Contains(text, "more not found\n") {
		t.Fatalf("text plan does not name the first ids not found and count the rest:\n%s", text)
	}
}

// An id two messages share: the dry run plans both, the delete says it
// removed both. (replay's shared-id tests act on a broker.)
func TestSharedIDDryRunAndDelete(t *testing.T) {
	const q, id = "orders.dlq", "sha256:0123abcd"
	to := retrycore.Destination{Exchange: "main", RoutingKey: "payment.execute"}
	plan := replay.Plan{
		Items:  []replay.PlanItem{{ID: id, Destination: to, Source: "headers"}, {ID: id, Destination: to, Source: "headers"}},
		Routes: []replay.RoutePreview{{Destination: to, Messages: 2, Available: true, Queues: []string{"main"}}},
	}
	s := &fakeSession{planEach: func(o replay.Options, sink replay.PlanSink) (replay.Plan, error) {
		if len(o.Select.IDs) != 1 || o.Select.IDs[0] != id {
			t.Errorf("selection %+v, want --id %s", o.Select, id)
		}
		return planOf(plan)(o, sink)
	}}
	f, b := fakeFactory(t, s)
	if code := run(context.Background(), f, []string{"-o", "json", "replay", q, "--id", id, "--dry-run"}); code != 0 {
		t.Fatalf("dry run: exit %d\nstderr %s", code, b.err.String())
	}
	var jp replay.Plan
	if err := json.Unmarshal([]byte(strings.TrimSpace(b.out.String())), &jp); err != nil || len(jp.Items) != 2 {
		t.Fatalf("replay --id %s --dry-run -o json: %d items (%v), want 2:\n%s", id, len(jp.Items), err, b.out.String())
	}

	s = &fakeSession{delete: func(o replay.DeleteOptions) (replay.Result, error) {
		if o.Queue != q || len(o.Select.IDs) != 1 || o.Select.IDs[0] != id {
			t.Errorf("delete options %+v", o)
		}
		return replay.Result{Done: 2}, nil
	}}
	f, b = fakeFactory(t, s)
	if code := run(context.Background(), f, []string{"delete", q, "--id", id, "--yes"}); code != 0 {
		t.Fatalf("delete: exit %d\nstderr %s", code, b.err.String())
	}
	if !strings.Contains(b.out.String()+b.err.String(), "deleted 2 message(s)") {
		t.Errorf("delete by a shared id: want \"deleted 2 message(s)\":\n%s%s", b.out.String(), b.err.String())
	}
}
