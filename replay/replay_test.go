//go:build integration

package replay_test

import (
	"strings"
	"sync"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker/brokertest"
	"github.com/parkinglot/parkinglot/replay"
	"github.com/parkinglot/parkinglot/retrycore"
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

// A plan says what goes where, with the route preview, and changes no
// queue depth. (ui/cli tests how the dry run prints it.)
func TestDryRunChangesNoQueueDepth(t *testing.T) {
	ch := brokertest.Channel(t)
	s1 := declareSeed1(t, ch)
	s1.park(t, ch, "pay-d1", []byte(`{"a":1}`), true)
	s1.park(t, ch, "pay-d2", []byte(`{"a":2}`), true)

	s, _ := openSession(t, replay.Config{})
	plan, err := s.Plan(testCtx(t, 30*time.Second), replay.Options{Queue: s1.parking, Select: replay.Selector{All: true}})
	if err != nil {
		t.Fatal(err)
	}
	want := retrycore.Destination{Exchange: s1.mainEx, RoutingKey: s1.mainKey}
	if len(plan.Routes) != 1 || plan.Routes[0].Destination != want || plan.Routes[0].Messages != 2 || strings.Join(plan.Routes[0].Queues, ",") != s1.mainQ {
		t.Errorf("routes %+v: want 2 to %s reaching %s", plan.Routes, want, s1.mainQ)
	}
	if len(plan.Items) != 2 || plan.Items[0].ID != "pay-d1" || plan.Items[0].Destination != want {
		t.Errorf("items %+v: want pay-d1 and pay-d2 to %s", plan.Items, want)
	}
	brokertest.WaitDepth(t, s1.parking, 2, 15*time.Second)
	if n := brokertest.Depth(t, ch, s1.mainQ); n != 0 {
		t.Fatalf("a plan sent %d messages", n)
	}
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
	// TargetQueue sends to the queue it failed in. (ui/cli tests the flag
	// the command line names.)
	tq, err := s.Plan(ctx, replay.Options{Queue: q, Select: replay.Selector{All: true}, Target: replay.TargetQueue})
	if err != nil || len(tq.Items) != 1 || tq.Items[0].Source != replay.SourceTargetQueue || tq.Items[0].Destination != (retrycore.Destination{RoutingKey: mine}) {
		t.Fatalf("plan with TargetQueue: %v, items %+v", err, tq.Items)
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

// The facts `list -o json`, `show -o json` and `replay -o json` print:
// the origin and attempts of each summary, the deaths and typed headers of
// a message, an event a message replayed. (ui/cli tests the lines.)
func TestJSONOutputLinesParse(t *testing.T) {
	ch := brokertest.Channel(t)
	s1 := declareSeed1(t, ch)
	s1.park(t, ch, "pay-j1", []byte(`{"j":1}`), false)
	s1.park(t, ch, "pay-j2", []byte(`{"j":2}`), false)
	s, _ := openSession(t, replay.Config{})
	ctx := testCtx(t, 60*time.Second)

	b, err := s.Browse(ctx, replay.BrowseOptions{Queue: s1.parking})
	if err != nil || len(b.Summaries) != 2 {
		t.Fatalf("browse: %v, %d summaries, want 2", err, len(b.Summaries))
	}
	for _, sum := range b.Summaries {
		if sum.Origin == nil || sum.Origin.Exchange != s1.mainEx || sum.Facts.Attempts != 4 {
			t.Errorf("summary %+v: want the origin and attempts decoded", sum)
		}
	}

	m, sum, err := s.Find(ctx, s1.parking, "pay-j1")
	if err != nil || len(sum.Facts.Deaths) != 1 || sum.Facts.Deaths[0].Queue != s1.delayQ || sum.Facts.Error == "" {
		t.Fatalf("find: %v, facts %+v", err, sum.Facts)
	}
	raw, err := m.MarshalJSON()
	if err != nil || !strings.Contains(string(raw), `"x-retry-count":{"type":"int32","value":3}`) {
		t.Errorf("message JSON lacks typed headers: %v %s", err, raw)
	}

	var kinds []string
	res, err := s.Replay(ctx, replay.Options{Queue: s1.parking, Select: replay.Selector{All: true},
		Progress: func(e replay.Event) {
			if e.Kind == replay.EventReplayed {
				kinds = append(kinds, e.ID)
			}
		}})
	if err != nil || res.Done != 2 {
		t.Fatalf("replay: %v, %+v", err, res)
	}
	if strings.Join(kinds, ",") != "pay-j1,pay-j2" {
		t.Errorf("replayed events for %v, want pay-j1,pay-j2", kinds)
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
	dst := brokertest.Name(t, "dst")
	brokertest.DeclareQueue(t, ch, dst, nil)
	if res, err := s.Replay(ctx, replay.Options{Queue: q, Select: replay.Selector{Filter: `headers["tenant"] == "acme"`}, To: dest("", dst)}); err != nil || res.Done != 2 {
		t.Fatalf("replay with the filter: %v, %+v", err, res)
	}
	brokertest.WaitDepth(t, dst, 2, 15*time.Second)
	brokertest.WaitDepth(t, q, 1, 15*time.Second)
}
