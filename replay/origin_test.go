//go:build integration

package replay_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker/brokertest"
	"github.com/parkinglot/parkinglot/replay"
	"github.com/parkinglot/parkinglot/retrycore"
)

// The seed's Go consumer leaves only retry.exchange/payment.retry in
// x-death; the origin is found by following the delay queue's
// dead-letter arguments through the management API.
func TestReplaySeed1FollowsDelayQueueDLXToMainExchange(t *testing.T) {
	ch := brokertest.Channel(t)
	s1 := declareSeed1(t, ch)
	body := []byte(`{"payment":42}`)
	s1.park(t, ch, "pay-1", body, false)

	s, _ := openSession(t, replay.Config{})
	ctx := testCtx(t, 60*time.Second)
	plan, err := s.Plan(ctx, replay.Options{Queue: s1.parking, Select: replay.Selector{All: true}})
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Items) != 1 || plan.Items[0].Destination != (retrycore.Destination{Exchange: s1.mainEx, RoutingKey: s1.mainKey}) ||
		!strings.HasPrefix(plan.Items[0].Source, retrycore.SourceDelayQueue) {
		t.Fatalf("plan %+v: want one message to %s/%s via the delay queue", plan.Items, s1.mainEx, s1.mainKey)
	}
	res, err := s.Replay(ctx, replay.Options{Queue: s1.parking, Select: replay.Selector{All: true}})
	if err != nil || res.Err() != nil {
		t.Fatalf("replay: %v / %v %+v", err, res.Err(), res)
	}
	got := drainAll(t, ch, s1.mainQ, 1)
	if len(got) != 1 {
		t.Fatalf("%d messages reached %s, want 1", len(got), s1.mainQ)
	}
	assertReplayed(t, got[0], "pay-1", body)
	if got[0].Exchange != s1.mainEx || got[0].RoutingKey != s1.mainKey {
		t.Errorf("copy came through %s/%s, want %s/%s", got[0].Exchange, got[0].RoutingKey, s1.mainEx, s1.mainKey)
	}
	brokertest.WaitDepth(t, s1.parking, 0, 15*time.Second)
}

func TestReplaySeed1ViaOriginalHeaders(t *testing.T) {
	ch := brokertest.Channel(t)
	s1 := declareSeed1(t, ch)
	s1.park(t, ch, "pay-2", []byte(`{"payment":2}`), true)

	s, _ := openSession(t, replay.Config{})
	ctx := testCtx(t, 60*time.Second)
	plan, err := s.Plan(ctx, replay.Options{Queue: s1.parking, Select: replay.Selector{IDs: []string{"pay-2"}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Items) != 1 || plan.Items[0].Source != retrycore.SourceOriginalHeaders {
		t.Fatalf("plan %+v: want the origin from x-original-exchange", plan.Items)
	}
	res, err := s.Replay(ctx, replay.Options{Queue: s1.parking, Select: replay.Selector{IDs: []string{"pay-2"}}})
	if err != nil || res.Done != 1 {
		t.Fatalf("replay: %v %+v", err, res)
	}
	got := drainAll(t, ch, s1.mainQ, 1)
	if len(got) != 1 {
		t.Fatalf("%d messages reached the main queue, want 1", len(got))
	}
	assertReplayed(t, got[0], "pay-2", []byte(`{"payment":2}`))
	brokertest.WaitDepth(t, s1.parking, 0, 15*time.Second)
}

// The config's per-parking-lot default wins over the headers, through
// the CLI.
func TestReplaySeed1ViaConfigDefaultCLI(t *testing.T) {
	ch := brokertest.Channel(t)
	s1 := declareSeed1(t, ch)
	s1.park(t, ch, "pay-3", []byte(`{"payment":3}`), false)
	// A second queue on the same key shows where the config default sends.
	other := brokertest.Name(t, "audit.q")
	brokertest.DeclareQueue(t, ch, other, nil)
	otherEx := brokertest.Name(t, "other.ex")
	brokertest.DeclareExchange(t, ch, otherEx, "direct")
	bind(t, ch, other, otherEx, "audit")

	c := newCLI(t)
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(cfg, []byte("parking_lots:\n  "+s1.parking+":\n    to: "+otherEx+":audit\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := c.must(0, "", "--config", cfg, "replay", s1.parking, "--all", "--yes")
	if !strings.Contains(r.stdout, "replayed 1 message") {
		t.Errorf("output %q: want a count line", r.stdout)
	}
	got := drainAll(t, ch, other, 1)
	if len(got) != 1 {
		t.Fatalf("%d messages at the configured default, want 1", len(got))
	}
	assertReplayed(t, got[0], "pay-3", []byte(`{"payment":3}`))
	if n := brokertest.Depth(t, ch, s1.mainQ); n != 0 {
		t.Errorf("%d messages went to the header origin; the config default must win", n)
	}
	brokertest.WaitDepth(t, s1.parking, 0, 15*time.Second)
}

// Seed 2: nack → dead-letter (default exchange) → TTL wait queue → back,
// then parked with x-last-error by the consumer. The origin is the
// x-death entry of x-first-death-queue: the exchange and key it was first
// published with.
func TestReplaySeed2GoesBackToFirstDeathExchangeAndKey(t *testing.T) {
	ch := brokertest.Channel(t)
	ordersEx := brokertest.Name(t, "orders")
	mainQ := brokertest.Name(t, "orders.main")
	waitQ := brokertest.Name(t, "orders.wait")
	parking := brokertest.Name(t, "orders.parking")
	brokertest.DeclareExchange(t, ch, ordersEx, "direct")
	brokertest.DeclareQueue(t, ch, mainQ, amqp.Table{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": waitQ})
	brokertest.DeclareQueue(t, ch, waitQ, amqp.Table{"x-message-ttl": int32(30), "x-dead-letter-exchange": "", "x-dead-letter-routing-key": mainQ})
	brokertest.DeclareQueue(t, ch, parking, nil)
	bind(t, ch, mainQ, ordersEx, "orders.new")

	brokertest.Publish(t, ch, ordersEx, "orders.new", amqp.Publishing{MessageId: "order-1", Body: []byte("order one"), DeliveryMode: amqp.Persistent})
	for range 2 { // two failed attempts by nack
		d := brokertest.MustGet(t, ch, mainQ)
		if err := d.Nack(false, false); err != nil { // requeue false: dead-letter it
			t.Fatal(err)
		}
	}
	d := getOne(t, ch, mainQ)
	h := copyTable(d.Headers)
	h["x-last-error"] = "order service said 503"
	republish(t, ch, "", parking, d, h)

	s, _ := openSession(t, replay.Config{})
	ctx := testCtx(t, 60*time.Second)
	res, err := s.Replay(ctx, replay.Options{Queue: parking, Select: replay.Selector{All: true}})
	if err != nil || res.Done != 1 {
		t.Fatalf("replay: %v %+v", err, res)
	}
	got := drainAll(t, ch, mainQ, 1)
	if len(got) != 1 {
		t.Fatalf("%d messages back in %s, want 1", len(got), mainQ)
	}
	if got[0].Exchange != ordersEx || got[0].RoutingKey != "orders.new" {
		t.Fatalf("copy came through %q/%q, want %s/orders.new (the first death's)", got[0].Exchange, got[0].RoutingKey, ordersEx)
	}
	if _, ok := got[0].Headers["x-death"]; ok {
		t.Errorf("x-death kept: the copy must start with a fresh budget")
	}
	brokertest.WaitDepth(t, parking, 0, 15*time.Second)
}

// A message nothing says the origin of is refused with the contract's
// sentence, never sent somewhere guessed.
func TestReplayRefusesUnknownOrigin(t *testing.T) {
	ch := brokertest.Channel(t)
	q := brokertest.Name(t, "dlq")
	brokertest.DeclareQueue(t, ch, q, nil)
	brokertest.Publish(t, ch, "", q, amqp.Publishing{MessageId: "lost-1", Body: []byte("x")})
	c := newCLI(t)
	r := c.must(3, "", "replay", q, "--all", "--yes")
	if !strings.Contains(r.stdout, "lost-1: "+retrycore.ErrUnknownOrigin.Error()) {
		t.Errorf("output %q: want the refusal sentence for lost-1", r.stdout)
	}
	brokertest.WaitDepth(t, q, 1, 15*time.Second)
}

// TestManyRefusalsAreCountedNotListed: a parking lot where no message says
// its origin is refused whole, however large, with the lists bounded: the
// plan on a terminal lists the first 50 and counts the rest, -o json lists
// every one, and the run lists the first MaxListedFailures and counts the
// rest. Nothing leaves the queue.
func TestManyRefusalsAreCountedNotListed(t *testing.T) {
	const n = replay.MaxListedFailures + 150
	ch := brokertest.Channel(t)
	q := brokertest.Name(t, "dlq")
	brokertest.DeclareQueue(t, ch, q, nil)
	publishN(t, ch, "", q, n, func(i int) amqp.Publishing {
		return amqp.Publishing{MessageId: idOf(i), Body: []byte("x")}
	})
	brokertest.WaitDepth(t, q, n, 15*time.Second)
	c := newCLI(t)

	plan := c.must(3, "", "replay", q, "--all", "--dry-run")
	if want := fmt.Sprintf("0 message(s) in %s to replay, %d refused", q, n); !strings.Contains(plan.stdout, want) {
		t.Errorf("plan %q: want %q", plan.stdout, want)
	}
	if got := strings.Count(plan.stdout, "  refused "); got != 50 {
		t.Errorf("plan lists %d refusals, want the first 50", got)
	}
	if want := fmt.Sprintf("… and %d more refused", n-50); !strings.Contains(plan.stdout, want) {
		t.Errorf("plan %q: want %q", plan.stdout, want)
	}

	js := c.must(3, "", "replay", q, "--all", "--dry-run", "-o", "json")
	first, _, _ := strings.Cut(js.stdout, "\n")
	var p replay.Plan
	if err := json.Unmarshal([]byte(first), &p); err != nil {
		t.Fatalf("plan line %q: %v", first, err)
	}
	if len(p.Refused) != n || p.Refused[n-1].Err == "" {
		t.Errorf("-o json plan lists %d refusals, want all %d with their reason", len(p.Refused), n)
	}

	run := c.must(3, "", "replay", q, "--all", "--yes")
	if got := strings.Count(run.stdout, "not done: "); got != replay.MaxListedFailures {
		t.Errorf("result lists %d failures, want the first %d", got, replay.MaxListedFailures)
	}
	if want := fmt.Sprintf("… and %d more not done", n-replay.MaxListedFailures); !strings.Contains(run.stdout, want) {
		t.Errorf("result %q: want %q", run.stdout, want)
	}
	if !strings.Contains(run.stderr, retrycore.ErrUnknownOrigin.Error()) {
		t.Errorf("error line %q: want the one reason", run.stderr)
	}
	brokertest.WaitDepth(t, q, n, 15*time.Second)
}
