package cli

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/replay"
	"github.com/parkinglot/parkinglot/retrycore"
)

// A dry run prints what goes where, with the route preview, and -o json
// the plan as one object. (replay's TestDryRunChangesNoQueueDepth plans on
// a broker.)
func TestDryRunPrintsRoutesAndItems(t *testing.T) {
	to := retrycore.Destination{Exchange: "payments", RoutingKey: "payment.execute"}
	plan := replay.Plan{
		Items:  []replay.PlanItem{{ID: "pay-d1", Destination: to, Source: "x-death"}, {ID: "pay-d2", Destination: to, Source: "x-death"}},
		Routes: []replay.RoutePreview{{Destination: to, Messages: 2, Available: true, Queues: []string{"payments.main"}}},
	}
	f, b := fakeFactory(t, &fakeSession{planEach: planOf(plan)})
	if code := run(context.Background(), f, []string{"replay", "payments.parking", "--all", "--dry-run"}); code != 0 {
		t.Fatalf("exit %d\nstderr %s", code, b.err.String())
	}
	if want := "2 → payments / payment.execute → reaches payments.main"; !strings.Contains(b.out.String(), want) {
		t.Errorf("dry run output lacks %q:\n%s", want, b.out.String())
	}
	if !strings.Contains(b.out.String(), "pay-d1 → payments → payment.execute") {
		t.Errorf("dry run output lacks the per-message line:\n%s", b.out.String())
	}

	f, b = fakeFactory(t, &fakeSession{planEach: planOf(plan)})
	if code := run(context.Background(), f, []string{"-o", "json", "replay", "payments.parking", "--all", "--dry-run"}); code != 0 {
		t.Fatalf("-o json: exit %d\nstderr %s", code, b.err.String())
	}
	var got replay.Plan
	if err := json.Unmarshal([]byte(strings.TrimSpace(b.out.String())), &got); err != nil || len(got.Items) != 2 {
		t.Fatalf("json plan %q: %v", b.out.String(), err)
	}
}

// The route preview's warning about other queues names the flag that
// avoids them, and a plan with --target queue says so per message.
// (replay's TestRoutePreviewWarnsAboutOtherQueuesAndTargetQueueAvoidsThem
// gets the warning from a broker.)
func TestRoutePreviewNamesTargetQueue(t *testing.T) {
	const mine, theirs = "billing", "shipping"
	shared := retrycore.Destination{Exchange: "events", RoutingKey: "order.paid"}
	warned := replay.Plan{
		Items: []replay.PlanItem{{ID: "ev-1", Destination: shared, Source: "x-original-*", FailedQueue: mine}},
		Routes: []replay.RoutePreview{{Destination: shared, Messages: 1, Available: true, Queues: []string{mine, theirs}, FailedQueues: []string{mine},
			Warning: "also reaches other queues than the one that failed (" + mine + "): " + theirs + " — other consumers would get the messages again"}},
	}
	f, b := fakeFactory(t, &fakeSession{planEach: planOf(warned)})
	if code := run(context.Background(), f, []string{"replay", "billing.dlq", "--all", "--dry-run"}); code != 0 {
		t.Fatalf("exit %d\nstderr %s", code, b.err.String())
	}
	if !strings.Contains(b.out.String(), "— other consumers would get the messages again; --target queue sends them to "+mine+" alone\n") {
		t.Fatalf("replay --dry-run does not name --target queue:\n%s", b.out.String())
	}

	toQueue := retrycore.Destination{RoutingKey: mine}
	targeted := replay.Plan{
		Items:  []replay.PlanItem{{ID: "ev-1", Destination: toQueue, Source: replay.SourceTargetQueue, FailedQueue: mine}},
		Routes: []replay.RoutePreview{{Destination: toQueue, Messages: 1, Available: true, Queues: []string{mine}, FailedQueues: []string{mine}}},
	}
	s := &fakeSession{planEach: func(o replay.Options, sink replay.PlanSink) (replay.Plan, error) {
		if o.Target != replay.TargetQueue {
			t.Errorf("target %v, want the queue it failed in", o.Target)
		}
		return planOf(targeted)(o, sink)
	}}
	f, b = fakeFactory(t, s)
	if code := run(context.Background(), f, []string{"replay", "billing.dlq", "--all", "--dry-run", "--target", "queue"}); code != 0 {
		t.Fatalf("--target queue: exit %d\nstderr %s", code, b.err.String())
	}
	if !strings.Contains(b.out.String(), "ev-1 → (default) → "+mine+"  (--target queue)\n") {
		t.Fatalf("replay --dry-run --target queue does not say so:\n%s", b.out.String())
	}
}

// Without a terminal and without --yes, a command that removes or sends
// messages prints the plan, asks the engine for nothing more and exits 2
// with the --yes hint.
func TestNoTerminalNoYesPrintsPlanExit2(t *testing.T) {
	const q, id = "orders.dlq", "m-00000"
	to := retrycore.Destination{RoutingKey: "dst"}
	plan := replay.Plan{Items: []replay.PlanItem{{ID: id, Destination: to, Source: retrycore.SourceOverride}},
		Routes: []replay.RoutePreview{{Destination: to, Messages: 1, Available: true, Queues: []string{"dst"}}}}
	browse := func(o replay.BrowseOptions) (*replay.Browse, error) {
		o.OnBatch([]replay.Summary{{ID: id}})
		return &replay.Browse{}, nil
	}
	for _, args := range [][]string{
		{"replay", q, "--all", "--to", ":dst"},
		{"delete", q, "--all"},
		{"export", q, "--file", t.TempDir() + "/out.jsonl", "--remove"},
		{"edit", q, id, "--to", ":dst"},
	} {
		// Replay, Delete, Export and FinishEdit are not set: calling them
		// fails the test.
		f, b := fakeFactory(t, &fakeSession{planEach: planOf(plan), browse: browse})
		if code := run(context.Background(), f, args); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
		if !strings.Contains(b.out.String(), id) || !strings.Contains(b.err.String(), "pass --yes") {
			t.Errorf("%v: want the plan on stdout and the --yes hint on stderr:\n%s\n%s", args, b.out.String(), b.err.String())
		}
	}
}

// -o json prints one JSON object per line for list, show and replay (an
// event a message, then the result). (replay's TestJSONOutputLinesParse
// reads the same facts from a broker.)
func TestJSONOutputLinesParse(t *testing.T) {
	const q = "payments.parking"
	m := broker.Message{Properties: broker.Properties{MessageID: "pay-j1"}, Body: []byte(`{"j":1}`), Headers: amqp.Table{
		"x-retry-count": int32(3), "x-last-error": "bank said 503",
		"x-death": []any{amqp.Table{"count": int64(1), "reason": "expired", "queue": "payments.delay", "time": time.Unix(1714564800, 0),
			"exchange": "payments", "routing-keys": []any{"payment.execute"}}},
		"x-original-exchange": "payments", "x-original-routing-key": "payment.execute",
	}}
	sum := replay.Summarize(context.Background(), m, retrycore.OriginQuery{})
	s := &fakeSession{
		browse: func(o replay.BrowseOptions) (*replay.Browse, error) {
			o.OnBatch([]replay.Summary{sum, sum})
			return &replay.Browse{}, nil
		},
		find: func(string, string) (broker.Message, replay.Summary, error) { return m, sum, nil },
		// The engine's events of a run of two: each planned, each
		// replayed, then finished.
		replay: func(o replay.Options) (replay.Result, error) {
			d := &sum.Origin.Destination
			for _, e := range []replay.Event{
				{Kind: replay.EventPlanned, ID: "pay-j1", Destination: d, Total: 1},
				{Kind: replay.EventPlanned, ID: "pay-j2", Destination: d, Total: 2},
				{Kind: replay.EventReplayed, ID: "pay-j1", Destination: d, Done: 1, Total: 2},
				{Kind: replay.EventReplayed, ID: "pay-j2", Destination: d, Done: 2, Total: 2},
				{Kind: replay.EventFinished, Done: 2, Total: 2},
			} {
				o.Progress(e)
			}
			return replay.Result{Done: 2}, nil
		},
	}
	if sum.Origin == nil {
		t.Fatalf("summary %+v: no origin", sum)
	}

	f, b := fakeFactory(t, s)
	if code := run(context.Background(), f, []string{"-o", "json", "list", q}); code != 0 {
		t.Fatalf("list: exit %d\nstderr %s", code, b.err.String())
	}
	lines := strings.Split(strings.TrimSpace(b.out.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("list -o json: %d lines, want 2:\n%s", len(lines), b.out.String())
	}
	for _, l := range lines {
		var got replay.Summary
		if err := json.Unmarshal([]byte(l), &got); err != nil || got.Origin == nil || got.Origin.Exchange != "payments" || got.Facts.Attempts != sum.Facts.Attempts {
			t.Errorf("list line %s: %v; want the origin and attempts", l, err)
		}
	}

	f, b = fakeFactory(t, s)
	if code := run(context.Background(), f, []string{"-o", "json", "show", q, "pay-j1"}); code != 0 {
		t.Fatalf("show: exit %d\nstderr %s", code, b.err.String())
	}
	var shown struct {
		Queue   string          `json:"queue"`
		Message json.RawMessage `json:"message"`
		Facts   struct {
			Deaths []struct {
				Queue string `json:"queue"`
			} `json:"deaths"`
			Error string `json:"error"`
		} `json:"facts"`
	}
	if err := json.Unmarshal([]byte(strings.TrimSpace(b.out.String())), &shown); err != nil || shown.Queue != q || len(shown.Message) == 0 ||
		len(shown.Facts.Deaths) != 1 || shown.Facts.Deaths[0].Queue != "payments.delay" || shown.Facts.Error == "" {
		t.Fatalf("show -o json %s: %v", b.out.String(), err)
	}
	if !strings.Contains(string(shown.Message), `"x-retry-count":{"type":"int32","value":3}`) {
		t.Errorf("show -o json lacks typed headers: %s", shown.Message)
	}

	f, b = fakeFactory(t, s)
	if code := run(context.Background(), f, []string{"-o", "json", "replay", q, "--all", "--yes"}); code != 0 {
		t.Fatalf("replay: exit %d\nstderr %s", code, b.err.String())
	}
	var kinds []string
	for _, l := range strings.Split(strings.TrimSpace(b.out.String()), "\n") {
		var e struct {
			Event string `json:"event"`
		}
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatalf("replay -o json line %q: %v", l, err)
		}
		kinds = append(kinds, e.Event)
	}
	if strings.Join(kinds, ",") != "replayed,replayed,finished" {
		t.Errorf("replay -o json events %v, want replayed,replayed,finished", kinds)
	}
}

// --filter reaches the engine's selection.
func TestReplayFilterSelects(t *testing.T) {
	const filter = `headers["tenant"] == "acme"`
	s := &fakeSession{replay: func(o replay.Options) (replay.Result, error) {
		if o.Select.Filter != filter || o.Select.All || len(o.Select.IDs) != 0 {
			t.Errorf("selection %+v, want the filter alone", o.Select)
		}
		return replay.Result{Done: 2}, nil
	}}
	f, b := fakeFactory(t, s)
	if code := run(context.Background(), f, []string{"replay", "orders.dlq", "--filter", filter, "--to", ":dst", "--yes"}); code != 0 {
		t.Fatalf("exit %d\nstderr %s", code, b.err.String())
	}
}

// A dry run names the queues a kept CC/BCC header reaches, and warns; -o
// json lists them. (replay's TestReplayPlanCountsCCQueues
// routes them on a broker.)
func TestDryRunShowsCCQueues(t *testing.T) {
	const mainQ, auditQ, cc = "orders.process", "audit", "orders.process.order.created"
	to := retrycore.Destination{Exchange: "orders", RoutingKey: "order.created"}
	plan := replay.Plan{
		Items: []replay.PlanItem{{ID: "cc-1", Destination: to, Source: "x-original-*", FailedQueue: mainQ, CC: []string{cc}}},
		Routes: []replay.RoutePreview{{Destination: to, Messages: 1, Available: true, Queues: []string{mainQ}, FailedQueues: []string{mainQ},
			CC: []string{cc}, CCQueues: []string{auditQ},
			Warning: "the CC/BCC header the messages keep (" + cc + ") also routes them to " + auditQ}},
	}
	f, b := fakeFactory(t, &fakeSession{planEach: planOf(plan)})
	if code := run(context.Background(), f, []string{"replay", "orders.parked", "--all", "--dry-run"}); code != 0 ||
		!strings.Contains(b.out.String(), auditQ+" through CC/BCC)") || !strings.Contains(b.out.String(), "warning: the CC/BCC header") {
		t.Errorf("replay --dry-run (exit %d):\n%s%s", code, b.out.String(), b.err.String())
	}
	f, b = fakeFactory(t, &fakeSession{planEach: planOf(plan)})
	if code := run(context.Background(), f, []string{"-o", "json", "replay", "orders.parked", "--all", "--dry-run"}); code != 0 ||
		!strings.Contains(b.out.String(), `"cc_queues":["`+auditQ+`"]`) {
		t.Errorf("replay --dry-run -o json (exit %d):\n%s%s", code, b.out.String(), b.err.String())
	}
}
