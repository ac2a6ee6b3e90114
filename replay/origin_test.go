//go:build integration

package replay_test

import (
	"errors"
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

// The config's per-parking-lot default wins over the headers. (ui/cli's
// TestReplayConfigDefault reads it from the config file.)
func TestReplaySeed1ViaConfigDefault(t *testing.T) {
	ch := brokertest.Channel(t)
	s1 := declareSeed1(t, ch)
	s1.park(t, ch, "pay-3", []byte(`{"payment":3}`), false)
	// A second queue on the same key shows where the config default sends.
	other := brokertest.Name(t, "audit.q")
	brokertest.DeclareQueue(t, ch, other, nil)
	otherEx := brokertest.Name(t, "other.ex")
	brokertest.DeclareExchange(t, ch, otherEx, "direct")
	bind(t, ch, other, otherEx, "audit")

	s, _ := openSession(t, replay.Config{ParkingLots: map[string]replay.ParkingLot{s1.parking: {To: otherEx + ":audit"}}})
	res, err := s.Replay(testCtx(t, 60*time.Second), replay.Options{Queue: s1.parking, Select: replay.Selector{All: true}})
	if err != nil || res.Done != 1 {
		t.Fatalf("replay: %v %+v", err, res)
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
// sentence, never sent somewhere guessed; two alike (the same id and
// body) are two messages, each refused and counted. (ui/cli tests the
// exit 3 and the lines.)
func TestReplayRefusesUnknownOrigin(t *testing.T) {
	ch := brokertest.Channel(t)
	q := brokertest.Name(t, "dlq")
	brokertest.DeclareQueue(t, ch, q, nil)
	lost := amqp.Publishing{MessageId: "lost-1", Body: []byte("x")}
	brokertest.PublishMany(t, ch, "", q, []amqp.Publishing{lost, lost})
	s, _ := openSession(t, replay.Config{})
	res, err := s.Replay(testCtx(t, 60*time.Second), replay.Options{Queue: q, Select: replay.Selector{All: true}})
	if err != nil || !errors.Is(res.Err(), replay.ErrNotAllDone) || res.Failed != 2 || len(res.Failures) != 2 {
		t.Fatalf("replay: %v, %+v: want both lost-1 refused", err, res)
	}
	for _, f := range res.Failures {
		if f.ID != "lost-1" || !strings.HasPrefix(f.Err, retrycore.ErrUnknownOrigin.Error()) || f.Code != replay.CodeUnknownOrigin {
			t.Errorf("failure %+v: want the refusal sentence for lost-1", f)
		}
	}
	brokertest.WaitDepth(t, q, 2, 15*time.Second)
}

// TestManyRefusalsAreCountedNotListed: a parking lot where no message says
// its origin is refused whole, however large, with the lists bounded:
// Plan lists every refusal, PlanEach and the run the first
// MaxListedFailures, all counting every one. Nothing leaves the queue.
// (ui/cli tests how the plan and the run print them.)
func TestManyRefusalsAreCountedNotListed(t *testing.T) {
	const n = replay.MaxListedFailures + 150
	ch := brokertest.Channel(t)
	q := brokertest.Name(t, "dlq")
	brokertest.DeclareQueue(t, ch, q, nil)
	publishN(t, ch, "", q, n, func(i int) amqp.Publishing {
		return amqp.Publishing{MessageId: idOf(i), Body: []byte("x")}
	})
	brokertest.WaitDepth(t, q, n, 15*time.Second)
	s, _ := openSession(t, replay.Config{})
	ctx := testCtx(t, 2*time.Minute)
	o := replay.Options{Queue: q, Select: replay.Selector{All: true}}

	all, err := s.Plan(ctx, o)
	if err != nil || all.Chosen != 0 || all.RefusedCount != n || len(all.Refused) != n || all.Refused[n-1].Err == "" {
		t.Fatalf("Plan: %v, chosen %d, refused %d, listed %d; want none chosen and all %d refused with their reason", err, all.Chosen, all.RefusedCount, len(all.Refused), n)
	}
	each, err := s.PlanEach(ctx, o, replay.PlanSink{})
	if err != nil || each.RefusedCount != n || len(each.Refused) != replay.MaxListedFailures {
		t.Fatalf("PlanEach: %v, refused %d, listed %d; want %d and %d listed", err, each.RefusedCount, len(each.Refused), n, replay.MaxListedFailures)
	}
	res, err := s.Replay(ctx, o)
	if err != nil || res.Done != 0 || res.Failed != n || len(res.Failures) != replay.MaxListedFailures {
		t.Fatalf("replay: %v, done %d, failed %d, listed %d; want %d failed, %d listed", err, res.Done, res.Failed, len(res.Failures), n, replay.MaxListedFailures)
	}
	if !strings.Contains(res.Err().Error(), retrycore.ErrUnknownOrigin.Error()) {
		t.Errorf("result error %q: want the one reason", res.Err())
	}
	brokertest.WaitDepth(t, q, n, 15*time.Second)
}
