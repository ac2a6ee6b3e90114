//go:build integration

package replay_test

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker/brokertest"
	"github.com/parkinglot/parkinglot/replay"
)

// --rate 50 on 200 messages: the limiter (burst 1) spaces the publishes,
// so the run takes at least 199/50 s.
func TestReplayRate50On200TakesAtLeast3_5s(t *testing.T) {
	ch := brokertest.Channel(t)
	q := brokertest.Name(t, "dlq")
	dst := brokertest.Name(t, "dst")
	brokertest.DeclareQueue(t, ch, q, nil)
	brokertest.DeclareQueue(t, ch, dst, nil)
	parkPlain(t, ch, q, 200)

	s, _ := openSession(t, replay.Config{})
	start := time.Now()
	res, err := s.Replay(testCtx(t, 60*time.Second), replay.Options{Queue: q, Select: replay.Selector{All: true}, To: dest("", dst), Rate: 50})
	elapsed := time.Since(start)
	if err != nil || res.Done != 200 {
		t.Fatalf("replay: %v %+v", err, res)
	}
	if elapsed < 3500*time.Millisecond {
		t.Fatalf("200 messages at --rate 50 took %v; want ≥ 3.5s", elapsed)
	}
	t.Logf("200 messages at --rate 50: %v", elapsed)
	brokertest.WaitDepth(t, dst, 200, 15*time.Second)
	brokertest.WaitDepth(t, q, 0, 15*time.Second)
}

// A dry run prints what goes where (with the route preview) and changes
// no queue depth.
func TestDryRunChangesNoQueueDepth(t *testing.T) {
	ch := brokertest.Channel(t)
	s1 := declareSeed1(t, ch)
	s1.park(t, ch, "pay-d1", []byte(`{"a":1}`), true)
	s1.park(t, ch, "pay-d2", []byte(`{"a":2}`), true)

	c := newCLI(t)
	r := c.must(0, "", "replay", s1.parking, "--all", "--dry-run")
	want := "2 → " + s1.mainEx + " / " + s1.mainKey + " → reaches " + s1.mainQ
	if !strings.Contains(r.stdout, want) {
		t.Errorf("dry run output lacks %q:\n%s", want, r.stdout)
	}
	if !strings.Contains(r.stdout, "pay-d1 → "+s1.mainEx+" → "+s1.mainKey) {
		t.Errorf("dry run output lacks the per-message line:\n%s", r.stdout)
	}
	brokertest.WaitDepth(t, s1.parking, 2, 15*time.Second)
	if n := brokertest.Depth(t, ch, s1.mainQ); n != 0 {
		t.Fatalf("dry run sent %d messages", n)
	}
	// -o json: the plan as one object.
	r = c.must(0, "", "-o", "json", "replay", s1.parking, "--all", "--dry-run")
	var plan replay.Plan
	if err := json.Unmarshal([]byte(strings.TrimSpace(r.stdout)), &plan); err != nil || len(plan.Items) != 2 {
		t.Fatalf("json plan %q: %v", r.stdout, err)
	}
	brokertest.WaitDepth(t, s1.parking, 2, 15*time.Second)
}

// The route preview warns when the origin reaches more queues than the one
// that failed (a shared fanout), and --target queue sends to that one.
func TestRoutePreviewWarnsAboutOtherQueuesAndTargetQueueAvoidsThem(t *testing.T) {
	ch := brokertest.Channel(t)
	shared := brokertest.Name(t, "events")
	mine := brokertest.Name(t, "billing")
	theirs := brokertest.Name(t, "shipping")
	q := brokertest.Name(t, "billing.dlq")
	brokertest.DeclareExchange(t, ch, shared, "fanout")
	brokertest.DeclareQueue(t, ch, mine, nil)
	brokertest.DeclareQueue(t, ch, theirs, nil)
	brokertest.DeclareQueue(t, ch, q, nil)
	bind(t, ch, mine, shared, "")
	bind(t, ch, theirs, shared, "")
	brokertest.Publish(t, ch, "", q, amqp.Publishing{MessageId: "ev-1", Body: []byte("e"), Headers: amqp.Table{
		"x-original-exchange": shared, "x-original-routing-key": "order.paid", "x-original-queue": mine, "x-last-error": "bad"}})

	s, _ := openSession(t, replay.Config{})
	ctx := testCtx(t, 30*time.Second)
	plan, err := s.Plan(ctx, replay.Options{Queue: q, Select: replay.Selector{All: true}})
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Routes) != 1 || !plan.Routes[0].Warns() || plan.Routes[0].Warning != "" {
		t.Fatalf("routes %+v: want a route that warns, in no words (the ui words it)", plan.Routes)
	}
	if others := plan.Routes[0].OtherQueues(); len(others) != 1 || others[0] != theirs {
		t.Fatalf("other queues %v, want [%s]", others, theirs)
	}
	// The command line names the flag that avoids them.
	r := newCLI(t).must(0, "", "replay", q, "--all", "--dry-run")
	if !strings.Contains(r.stdout, "— other consumers would get the messages again; --target queue sends them to "+mine+" alone\n") {
		t.Fatalf("replay --dry-run does not name --target queue:\n%s", r.stdout)
	}
	r = newCLI(t).must(0, "", "replay", q, "--all", "--dry-run", "--target", "queue")
	if !strings.Contains(r.stdout, "ev-1 → (default) → "+mine+"  (--target queue)\n") {
		t.Fatalf("replay --dry-run --target queue does not say so:\n%s", r.stdout)
	}
	res, err := s.Replay(ctx, replay.Options{Queue: q, Select: replay.Selector{All: true}, Target: replay.TargetQueue})
	if err != nil || res.Done != 1 {
		t.Fatalf("replay --target queue: %v %+v", err, res)
	}
	brokertest.WaitDepth(t, mine, 1, 15*time.Second)
	if n := brokertest.Depth(t, ch, theirs); n != 0 {
		t.Fatalf("--target queue reached %s too", theirs)
	}
}

// Without a terminal and without --yes, a command that removes or sends
// messages prints the plan, changes nothing and exits 2.
func TestNoTerminalNoYesPrintsPlanChangesNothingExit2(t *testing.T) {
	ch := brokertest.Channel(t)
	q := brokertest.Name(t, "dlq")
	dst := brokertest.Name(t, "dst")
	brokertest.DeclareQueue(t, ch, q, nil)
	brokertest.DeclareQueue(t, ch, dst, nil)
	parkPlain(t, ch, q, 3)
	c := newCLI(t)
	exp := t.TempDir() + "/out.jsonl"
	for _, args := range [][]string{
		{"replay", q, "--all", "--to", ":" + dst},
		{"delete", q, "--all"},
		{"export", q, "--file", exp, "--remove"},
		{"edit", q, idOf(0), "--to", ":" + dst},
	} {
		r := c.must(2, "", args...)
		if !strings.Contains(r.stdout, idOf(0)) || !strings.Contains(r.stderr, "pass --yes") {
			t.Errorf("%v: want the plan on stdout and the --yes hint on stderr:\n%s\n%s", args, r.stdout, r.stderr)
		}
		brokertest.WaitDepth(t, q, 3, 15*time.Second)
		if n := brokertest.Depth(t, ch, dst); n != 0 {
			t.Fatalf("%v sent %d messages", args, n)
		}
	}
}

// Replaying a parking lot into itself: each message is replayed once (the
// loop guard skips the copies this run sent), not forever.
func TestLoopGuardReplayIntoItselfReplaysEachOnce(t *testing.T) {
	ch := brokertest.Channel(t)
	q := brokertest.Name(t, "dlq")
	brokertest.DeclareQueue(t, ch, q, nil)
	parkPlain(t, ch, q, 20)

	s, _ := openSession(t, replay.Config{})
	var mu sync.Mutex
	replayed := map[string]int{}
	res, err := s.Replay(testCtx(t, 60*time.Second), replay.Options{Queue: q, Select: replay.Selector{All: true}, To: dest("", q), Window: 4,
		Progress: func(e replay.Event) {
			if e.Kind == replay.EventReplayed {
				mu.Lock()
				replayed[e.ID]++
				mu.Unlock()
			}
		}})
	if err != nil || res.Done != 20 {
		t.Fatalf("replay into itself: %v %+v", err, res)
	}
	for id, n := range replayed {
		if n != 1 {
			t.Errorf("%s replayed %d times", id, n)
		}
	}
	got := drainAll(t, ch, q, 20)
	if len(got) != 20 {
		t.Fatalf("%d messages in the parking lot, want 20", len(got))
	}
	for _, d := range got {
		if n, _ := d.Headers["x-replay-count"].(int32); n != 1 {
			t.Errorf("%s: x-replay-count %v, want 1", d.MessageId, d.Headers["x-replay-count"])
		}
	}
}

// -o json prints one JSON object per line for list, show and replay.
func TestJSONOutputLinesParse(t *testing.T) {
	ch := brokertest.Channel(t)
	s1 := declareSeed1(t, ch)
	s1.park(t, ch, "pay-j1", []byte(`{"j":1}`), false)
	s1.park(t, ch, "pay-j2", []byte(`{"j":2}`), false)
	c := newCLI(t)

	r := c.must(0, "", "-o", "json", "list", s1.parking)
	lines := nonEmptyLines(r.stdout)
	if len(lines) != 2 {
		t.Fatalf("list -o json: %d lines, want 2:\n%s", len(lines), r.stdout)
	}
	for _, l := range lines {
		var s replay.Summary
		if err := json.Unmarshal([]byte(l), &s); err != nil || s.Origin == nil || s.Origin.Exchange != s1.mainEx || s.Facts.Attempts != 4 {
			t.Errorf("list line %s: %v; want the origin and attempts decoded", l, err)
		}
	}

	r = c.must(0, "", "-o", "json", "show", s1.parking, "pay-j1")
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
	if err := json.Unmarshal([]byte(strings.TrimSpace(r.stdout)), &shown); err != nil || len(shown.Message) == 0 ||
		len(shown.Facts.Deaths) != 1 || shown.Facts.Deaths[0].Queue != s1.delayQ || shown.Facts.Error == "" {
		t.Fatalf("show -o json %s: %v", r.stdout, err)
	}
	if !strings.Contains(string(shown.Message), `"x-retry-count":{"type":"int32","value":3}`) {
		t.Errorf("show -o json lacks typed headers: %s", shown.Message)
	}

	r = c.must(0, "", "-o", "json", "replay", s1.parking, "--all", "--yes")
	lines = nonEmptyLines(r.stdout)
	var kinds []string
	for _, l := range lines {
		var e struct {
			Event string `json:"event"`
			Done  int    `json:"done"`
		}
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatalf("replay -o json line %q: %v", l, err)
		}
		kinds = append(kinds, e.Event)
	}
	if strings.Join(kinds, ",") != "replayed,replayed,finished" {
		t.Errorf("replay -o json events %v, want replayed,replayed,finished", kinds)
	}
	brokertest.WaitDepth(t, s1.mainQ, 2, 15*time.Second)
}

func nonEmptyLines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.TrimSpace(l) != "" {
			out = append(out, l)
		}
	}
	return out
}

// Filters over error, age and headers select the right messages.
func TestFiltersErrorAgeAndHeaders(t *testing.T) {
	ch := brokertest.Channel(t)
	q := brokertest.Name(t, "dlq")
	brokertest.DeclareQueue(t, ch, q, nil)
	now := time.Now()
	brokertest.PublishMany(t, ch, "", q, []amqp.Publishing{
		{MessageId: "old-timeout-acme", Body: []byte("1"), Headers: amqp.Table{"x-last-error": "read timeout after 30s", "x-parked-at": now.Add(-3 * time.Hour), "tenant": "acme"}},
		{MessageId: "new-timeout-other", Body: []byte("2"), Headers: amqp.Table{"x-last-error": "connect timeout", "x-parked-at": now.Add(-time.Minute), "tenant": "globex"}},
		{MessageId: "old-404-acme", Body: []byte("3"), Headers: amqp.Table{"x-last-error": "transfer 12 not found", "x-parked-at": now.Add(-2 * time.Hour), "tenant": []byte("acme")}},
	})
	s, _ := openSession(t, replay.Config{})
	ctx := testCtx(t, 30*time.Second)
	for _, tc := range []struct {
		filter string
		want   string
	}{
		{`error contains "timeout"`, "old-timeout-acme,new-timeout-other"},
		{`age > duration("1h")`, "old-timeout-acme,old-404-acme"},
		{`headers["tenant"] == "acme"`, "old-timeout-acme,old-404-acme"},
		{`error contains "timeout" && age > duration("1h") && headers["tenant"] == "acme"`, "old-timeout-acme"},
		{`id startsWith "new"`, "new-timeout-other"},
	} {
		b, err := s.Browse(ctx, replay.BrowseOptions{Queue: q, Filter: tc.filter})
		if err != nil {
			t.Fatalf("%s: %v", tc.filter, err)
		}
		var ids []string
		for _, sum := range b.Summaries {
			ids = append(ids, sum.ID)
		}
		if strings.Join(ids, ",") != tc.want {
			t.Errorf("filter %s: got %v, want %s", tc.filter, ids, tc.want)
		}
	}
	brokertest.WaitDepth(t, q, 3, 15*time.Second)
	// The same filter through replay selects the same messages.
	c := newCLI(t)
	dst := brokertest.Name(t, "dst")
	brokertest.DeclareQueue(t, ch, dst, nil)
	c.must(0, "", "replay", q, "--filter", `headers["tenant"] == "acme"`, "--to", ":"+dst, "--yes")
	brokertest.WaitDepth(t, dst, 2, 15*time.Second)
	brokertest.WaitDepth(t, q, 1, 15*time.Second)
}
