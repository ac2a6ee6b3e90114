//go:build integration

package replay_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker/brokertest"
	"github.com/parkinglot/parkinglot/replay"
	"github.com/parkinglot/parkinglot/retrycore"
)

// A message a quorum queue dead-lettered by its delivery limit (2, as an
// argument) was handled limit + 1 = 3 times; list shows 3, the limit
// looked up through the management API, not a lower bound. Every give-back
// here is a reject, which every version counts.
func TestQuorumDeliveryLimitAttemptsAreExact(t *testing.T) {
	ch := brokertest.Channel(t)
	mainQ := brokertest.Name(t, "limited")
	parking := brokertest.Name(t, "limited.parked")
	brokertest.DeclareQueue(t, ch, parking, nil)
	brokertest.DeclareQueue(t, ch, mainQ, amqp.Table{"x-queue-type": "quorum", "x-delivery-limit": int32(2),
		"x-dead-letter-exchange": "", "x-dead-letter-routing-key": parking})
	brokertest.Publish(t, ch, "", mainQ, amqp.Publishing{MessageId: "limit-1", Body: []byte("x"), DeliveryMode: amqp.Persistent})
	runs := 0
	for brokertest.Depth(t, ch, parking) == 0 {
		d, ok, err := ch.Get(mainQ, false)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			time.Sleep(20 * time.Millisecond)
			continue
		}
		runs++
		if err := d.Reject(true); err != nil {
			t.Fatal(err)
		}
		if runs > 10 {
			t.Fatalf("still not dead-lettered after %d runs", runs)
		}
	}
	if runs != 3 {
		t.Fatalf("the handler ran %d times, want 3 (limit 2 + 1)", runs)
	}
	s, _ := openSession(t, replay.Config{})
	b, err := s.Browse(testCtx(t, 30*time.Second), replay.BrowseOptions{Queue: parking})
	if err != nil || len(b.Summaries) != 1 {
		t.Fatalf("browse: %v, %d summaries", err, len(b.Summaries))
	}
	f := b.Summaries[0].Facts
	if f.Attempts != int64(runs) || !strings.Contains(f.AttemptsSource, "limit 2") {
		t.Errorf("attempts %d (%s), want %d from the queue's limit 2", f.Attempts, f.AttemptsSource, runs)
	}
}

// replay --target queue sends the copy to the queue it failed in alone,
// and records where it first came from: when the copy fails again and is
// dead-lettered, resolving its origin gives the original exchange and
// routing key, not the default exchange and that queue (package doc, "What
// a replay sends").
func TestReplayTargetQueueRecordsTheOrigin(t *testing.T) {
	ch := brokertest.Channel(t)
	ex := brokertest.Name(t, "orders")
	mainQ := brokertest.Name(t, "orders.process")
	parking := brokertest.Name(t, "orders.parked")
	brokertest.DeclareExchange(t, ch, ex, "topic")
	brokertest.DeclareQueue(t, ch, parking, nil)
	brokertest.DeclareQueue(t, ch, mainQ, amqp.Table{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": parking})
	bind(t, ch, mainQ, ex, "order.*")

	fail := func() { // the handler fails: reject into the parking lot
		t.Helper()
		d := brokertest.MustGet(t, ch, mainQ)
		if err := d.Reject(false); err != nil {
			t.Fatal(err)
		}
		brokertest.WaitDepth(t, parking, 1, 15*time.Second)
	}
	brokertest.Publish(t, ch, ex, "order.created", amqp.Publishing{MessageId: "o-1", Body: []byte("order"), DeliveryMode: amqp.Persistent})
	fail()

	s, _ := openSession(t, replay.Config{})
	ctx := testCtx(t, 60*time.Second)
	res, err := s.Replay(ctx, replay.Options{Queue: parking, Select: replay.Selector{All: true}, Target: replay.TargetQueue})
	if err != nil || res.Done != 1 {
		t.Fatalf("replay --target queue: %v %+v", err, res)
	}
	if res.Resets["x-death"] != 1 {
		t.Errorf("result resets %v: want x-death reset on 1 message", res.Resets)
	}
	d := brokertest.MustGet(t, ch, mainQ)
	if d.Exchange != "" || d.RoutingKey != mainQ {
		t.Errorf("the copy came through %q / %q, want the default exchange and %s", d.Exchange, d.RoutingKey, mainQ)
	}
	if d.Headers[retrycore.HeaderOriginalExchange] != ex || d.Headers[retrycore.HeaderOriginalRoutingKey] != "order.created" || d.Headers[retrycore.HeaderOriginalQueue] != mainQ {
		t.Errorf("the copy's headers %v: want x-original-exchange %s, -routing-key order.created, -queue %s", d.Headers, ex, mainQ)
	}
	if _, ok := d.Headers[retrycore.HeaderDeath]; ok {
		t.Errorf("the copy kept x-death: %v", d.Headers)
	}
	if err := d.Reject(false); err != nil { // it fails again
		t.Fatal(err)
	}
	brokertest.WaitDepth(t, parking, 1, 15*time.Second)

	b, err := s.Browse(ctx, replay.BrowseOptions{Queue: parking})
	if err != nil || len(b.Summaries) != 1 {
		t.Fatalf("browse: %v, %d summaries", err, len(b.Summaries))
	}
	o := b.Summaries[0].Origin
	if o == nil || o.Exchange != ex || o.RoutingKey != "order.created" || o.Queue != mainQ {
		t.Fatalf("origin after the second failure %+v (%s), want %s / order.created, failed in %s", o, b.Summaries[0].OriginErr, ex, mainQ)
	}
	// And a replay to origin reaches the main queue through that exchange.
	res, err = s.Replay(ctx, replay.Options{Queue: parking, Select: replay.Selector{All: true}})
	if err != nil || res.Done != 1 {
		t.Fatalf("replay to origin: %v %+v", err, res)
	}
	if d := brokertest.MustGet(t, ch, mainQ); d.Exchange != ex || d.RoutingKey != "order.created" {
		t.Errorf("replayed through %q / %q, want %s / order.created", d.Exchange, d.RoutingKey, ex)
	} else {
		_ = d.Ack(false)
	}
}

// A parked message keeping a CC header (rascal's forward writes one) is
// routed with the CC keys too: the plan, the dry run (text and -o json)
// list the queues they reach with a warning, and the replay reaches them,
// as the broker routes it.
func TestReplayPlanCountsCCQueues(t *testing.T) {
	ch := brokertest.Channel(t)
	ex := brokertest.Name(t, "orders")
	mainQ := brokertest.Name(t, "orders.process")
	auditQ := brokertest.Name(t, "audit")
	parking := brokertest.Name(t, "orders.parking-lot")
	brokertest.DeclareExchange(t, ch, ex, "topic")
	brokertest.DeclareQueue(t, ch, parking, nil)
	brokertest.DeclareQueue(t, ch, mainQ, nil)
	brokertest.DeclareQueue(t, ch, auditQ, nil)
	bind(t, ch, mainQ, ex, "order.created")
	bind(t, ch, auditQ, ex, "orders.process.#")
	brokertest.Publish(t, ch, "", parking, amqp.Publishing{MessageId: "cc-1", Body: []byte("x"), Headers: amqp.Table{
		"CC":                             []any{"orders.process.order.created"},
		retrycore.HeaderOriginalExchange: ex, retrycore.HeaderOriginalRoutingKey: "order.created", retrycore.HeaderOriginalQueue: mainQ,
	}})
	brokertest.WaitDepth(t, parking, 1, 15*time.Second)

	s, _ := openSession(t, replay.Config{})
	ctx := testCtx(t, 60*time.Second)
	plan, err := s.Plan(ctx, replay.Options{Queue: parking, Select: replay.Selector{All: true}})
	if err != nil || len(plan.Routes) != 1 {
		t.Fatalf("plan: %v %+v", err, plan)
	}
	r := plan.Routes[0]
	if len(r.CCQueues) != 1 || r.CCQueues[0] != auditQ || !r.Warns() {
		t.Fatalf("route %+v: want %s through CC, with a warning", r, auditQ)
	}
	if len(plan.Items) != 1 || len(plan.Items[0].CC) != 1 {
		t.Errorf("plan items %+v: want the CC key", plan.Items)
	}
	// ui/cli's TestDryRunShowsCCQueues prints such a plan.
	brokertest.WaitDepth(t, parking, 1, 15*time.Second)

	res, err := s.Replay(ctx, replay.Options{Queue: parking, Select: replay.Selector{All: true}})
	if err != nil || res.Done != 1 {
		t.Fatalf("replay: %v %+v", err, res)
	}
	brokertest.WaitDepth(t, mainQ, 1, 15*time.Second)
	brokertest.WaitDepth(t, auditQ, 1, 15*time.Second)
}

// queues marks a queue as a parking lot when other queues dead-letter into
// it, whatever its name: through a dead-letter exchange's bindings (an
// argument), through the default exchange and a routing key, and through
// a policy; a TTL delay queue in a retry loop is not one, nor is the main
// queue it sends back to.
func TestQueuesMarkedByTheirRouting(t *testing.T) {
	ch := brokertest.Channel(t)
	dlx := brokertest.Name(t, "billing.dlx")
	held := brokertest.Name(t, "billing.holding")  // via the DLX's bindings
	inbox := brokertest.Name(t, "invoices.inbox")  // via the default exchange
	review := brokertest.Name(t, "refunds.review") // via a policy
	mainA := brokertest.Name(t, "billing.work")
	mainB := brokertest.Name(t, "invoices.work")
	mainC := brokertest.Name(t, "refunds.work")
	waitQ := brokertest.Name(t, "invoices.wait")
	brokertest.DeclareExchange(t, ch, dlx, "fanout")
	for _, q := range []string{held, inbox, review, mainC} {
		brokertest.DeclareQueue(t, ch, q, nil)
	}
	bind(t, ch, held, dlx, "")
	brokertest.DeclareQueue(t, ch, mainA, amqp.Table{"x-dead-letter-exchange": dlx})
	brokertest.DeclareQueue(t, ch, mainB, amqp.Table{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": waitQ})
	// The retry loop: mainB → waitQ (TTL) → mainB; and mainB's failures
	// also parked in inbox by a second queue's argument.
	brokertest.DeclareQueue(t, ch, waitQ, amqp.Table{"x-message-ttl": int32(1000), "x-dead-letter-exchange": "", "x-dead-letter-routing-key": mainB})
	feeder := brokertest.Name(t, "invoices.feeder")
	brokertest.DeclareQueue(t, ch, feeder, amqp.Table{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": inbox})
	policy := brokertest.Name(t, "dl")
	if err := brokertest.PutPolicy(t, policy, "^"+mainC+"$", map[string]any{"dead-letter-exchange": "", "dead-letter-routing-key": review}); err != nil {
		t.Fatal(err)
	}

	s, _ := openSession(t, replay.Config{})
	ctx := testCtx(t, 60*time.Second)
	var rows map[string]replay.QueueRow
	// The policy applies within a moment; the checks below say what is
	// missing if it never does.
	brokertest.Poll(15*time.Second, 200*time.Millisecond, func() bool {
		list, err := s.Queues(ctx)
		if err != nil {
			t.Fatal(err)
		}
		rows = map[string]replay.QueueRow{}
		for _, r := range list {
			rows[r.Name] = r
		}
		return rows[review].ParkingLot
	})
	for q, why := range map[string]string{
		held:   "dead-letter target of " + mainA + " (x-dead-letter-exchange " + dlx,
		inbox:  "dead-letter target of " + feeder + " (x-dead-letter-exchange (default exchange) / " + inbox + ")",
		review: "dead-letter target of " + mainC + " (policy " + policy,
	} {
		if r := rows[q]; !r.ParkingLot || !strings.HasPrefix(r.Why, why) {
			t.Errorf("%s: parking lot %v, why %q; want %q…", q, r.ParkingLot, r.Why, why)
		}
	}
	for _, q := range []string{waitQ, mainA, mainB, mainC, feeder} {
		if r := rows[q]; r.ParkingLot {
			t.Errorf("%s marked as a parking lot: %q", q, r.Why)
		}
	}
	// ui/cli's queues format tests print the why column and field.
}

// --target queue sends a copy to the queue it failed in alone: a CC header
// the parked message keeps (naming another queue, which the default
// exchange would route the copy to as well) is removed from the copy, and
// the plan and the result say so.
func TestReplayTargetQueueDropsCC(t *testing.T) {
	ch := brokertest.Channel(t)
	ex := brokertest.Name(t, "orders")
	mainQ := brokertest.Name(t, "orders.process")
	other := brokertest.Name(t, "other")
	parking := brokertest.Name(t, "orders.parked")
	brokertest.DeclareQueue(t, ch, parking, nil)
	brokertest.DeclareQueue(t, ch, other, nil)
	brokertest.DeclareQueue(t, ch, mainQ, nil)
	// Parked by a client that republishes (as rascal's forward does), so the
	// message keeps its CC header (the broker's own dead-lettering drops
	// it). The CC key names the other queue: through the default exchange,
	// where --target queue sends the copy, it would get the copy too.
	brokertest.Publish(t, ch, "", parking, amqp.Publishing{MessageId: "o-cc", Body: []byte("order"), Headers: amqp.Table{
		"CC": []any{other},
		"x-death": []any{amqp.Table{
			"queue": mainQ, "reason": "rejected", "count": int64(1), "exchange": ex,
			"routing-keys": []any{"order.created"}, "time": time.Now().Truncate(time.Second),
		}},
		"x-first-death-queue": mainQ, "x-first-death-reason": "rejected", "x-first-death-exchange": ex,
	}})
	brokertest.WaitDepth(t, parking, 1, 15*time.Second)
	// The CC routed this publish to the other queue as well: empty it.
	brokertest.WaitDepth(t, other, 1, 15*time.Second)
	brokertest.Purge(t, ch, other)

	s, _ := openSession(t, replay.Config{})
	ctx := testCtx(t, 60*time.Second)
	plan, err := s.Plan(ctx, replay.Options{Queue: parking, Select: replay.Selector{All: true}, Target: replay.TargetQueue})
	if err != nil || len(plan.Items) != 1 {
		t.Fatalf("plan: %v %+v", err, plan)
	}
	if it := plan.Items[0]; len(it.CC) != 0 || !slices.Contains(it.Resets, "CC (sent to the failed queue alone)") {
		t.Errorf("plan item CC %v, resets %v: want no CC and the CC removal said", it.CC, it.Resets)
	}
	res, err := s.Replay(ctx, replay.Options{Queue: parking, Select: replay.Selector{All: true}, Target: replay.TargetQueue})
	if err != nil || res.Done != 1 {
		t.Fatalf("replay --target queue: %v %+v", err, res)
	}
	if res.Resets["CC (sent to the failed queue alone)"] != 1 {
		t.Errorf("result resets %v: want the CC removal counted", res.Resets)
	}
	copyMsg := brokertest.MustGet(t, ch, mainQ)
	if _, ok := copyMsg.Headers["CC"]; ok {
		t.Errorf("the copy kept its CC header: %v", copyMsg.Headers)
	}
	_ = copyMsg.Ack(false)
	brokertest.WaitDepth(t, other, 0, 5*time.Second)
	brokertest.WaitDepth(t, parking, 0, 15*time.Second)
}
