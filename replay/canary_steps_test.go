//go:build integration

package replay_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker/brokertest"
	"github.com/parkinglot/parkinglot/replay"
	"github.com/parkinglot/parkinglot/retrycore"
)

// parkedFor is a parked message whose origin is the default exchange with
// routing key to (a queue, or nowhere); "" leaves it without an origin.
func parkedFor(id, body, lastError, to string) amqp.Publishing {
	h := amqp.Table{retrycore.HeaderLastError: lastError}
	if to != "" {
		h[retrycore.HeaderOriginalExchange] = ""
		h[retrycore.HeaderOriginalRoutingKey] = to
	}
	return amqp.Publishing{MessageId: id, Body: []byte(body), Headers: h}
}

// canaryOf is a canary of one step of n, watched briefly (nothing in
// these tests comes back).
func canaryOf(queue string, sel replay.Selector, n int) replay.CanaryOptions {
	return replay.CanaryOptions{Options: replay.Options{Queue: queue, Select: sel}, Steps: []int{n}, Wait: 300 * time.Millisecond, Poll: 100 * time.Millisecond}
}

// TestCanaryStepSendsTheFirstNOfTheSelection: a canary step of 1 sends one
// message of the selection, however many share its id, and none the
// filter left out. Two messages share id and body and differ in their
// error: a canary of the "error A" one sends it alone, the "error B" one
// stays parked. Three share an id: a step of 1 sends one, the rest the two
// others.
func TestCanaryStepSendsTheFirstNOfTheSelection(t *testing.T) {
	ch := brokertest.Channel(t)
	park, dest := brokertest.Name(t, "parking-lot"), brokertest.Name(t, "dest")
	brokertest.DeclareQueue(t, ch, park, nil)
	brokertest.DeclareQueue(t, ch, dest, nil)
	brokertest.PublishMany(t, ch, "", park, []amqp.Publishing{
		parkedFor("dup", `{"n":1}`, "error A", dest),
		parkedFor("dup", `{"n":1}`, "error B", dest),
		parkedFor("same", `{"n":2}`, "error C", dest),
		parkedFor("same", `{"n":3}`, "error C", dest),
		parkedFor("same", `{"n":4}`, "error C", dest),
	})
	brokertest.WaitDepth(t, park, 5, 10*time.Second)
	s, _ := openSession(t, replay.Config{})
	ctx := testCtx(t, time.Minute)

	res, steps, err := s.Canary(ctx, canaryOf(park, replay.Selector{Filter: `error contains "A"`}, 1))
	if err != nil || res.Done != 1 || res.Failed != 0 || len(steps) != 1 || steps[0].Replayed != 1 {
		t.Fatalf("canary of the filter: %+v, steps %+v, %v; want 1 done in a step of 1", res, steps, err)
	}
	got := brokertest.Drain(t, ch, dest)
	if len(got) != 1 || got[0].Headers[retrycore.HeaderLastError] != "error A" {
		t.Fatalf("the destination got %d message(s), want the \"error A\" one alone", len(got))
	}
	brokertest.WaitDepth(t, park, 4, 10*time.Second)

	res, steps, err = s.Canary(ctx, canaryOf(park, replay.Selector{IDs: []string{"same"}}, 1))
	if err != nil || res.Done != 3 || len(steps) != 1 || steps[0].Replayed != 1 {
		t.Fatalf("canary of an id three share: %+v, steps %+v, %v; want a step of 1, then the 2 others", res, steps, err)
	}
	brokertest.WaitDepth(t, dest, 3, 10*time.Second)
	brokertest.WaitDepth(t, park, 1, 10*time.Second) // the "error B" one
}

// TestCanaryStepThatReplaysNothingStops: a step of 1 whose message is
// unroutable replays nothing, so it tested nothing: the run stops with a
// CanaryNoneReplayedError (not done: exit 3), and every message stays
// parked. A message with no origin cannot be sent at all: it does not
// count toward the step, which sends the next, and the rest does not try
// it again (one failure, not one a step).
func TestCanaryStepThatReplaysNothingStops(t *testing.T) {
	ch := brokertest.Channel(t)
	park, dest := brokertest.Name(t, "parking-lot"), brokertest.Name(t, "dest")
	brokertest.DeclareQueue(t, ch, park, nil)
	brokertest.DeclareQueue(t, ch, dest, nil)
	msgs := []amqp.Publishing{parkedFor("u-1", `{}`, "boom", brokertest.Name(t, "nowhere"))}
	for i := range 3 {
		msgs = append(msgs, parkedFor(fmt.Sprintf("m-%d", i), fmt.Sprintf(`{"n":%d}`, i), "boom", dest))
	}
	brokertest.PublishMany(t, ch, "", park, msgs)
	brokertest.WaitDepth(t, park, 4, 10*time.Second)
	s, _ := openSession(t, replay.Config{})
	ctx := testCtx(t, time.Minute)

	res, steps, err := s.Canary(ctx, canaryOf(park, replay.Selector{All: true}, 1))
	var none *replay.CanaryNoneReplayedError
	if !errors.As(err, &none) || !errors.Is(err, replay.ErrNotAllDone) || none.Step != 1 || none.Failed != 1 {
		t.Fatalf("a step whose one message is unroutable: %v, want a CanaryNoneReplayedError of step 1 (1 failed)", err)
	}
	if res.Done != 0 || res.Failed != 1 || len(steps) != 0 {
		t.Errorf("result %+v, steps %+v; want 1 failed, nothing done, no step watched", res, steps)
	}
	brokertest.WaitDepth(t, park, 4, 10*time.Second)
	if n := brokertest.Depth(t, ch, dest); n != 0 {
		t.Errorf("the destination holds %d, want 0: the rest stays parked", n)
	}
	brokertest.Drain(t, ch, park)

	msgs[0] = parkedFor("n-1", `{}`, "boom", "") // no origin
	brokertest.PublishMany(t, ch, "", park, msgs)
	brokertest.WaitDepth(t, park, 4, 10*time.Second)
	res, steps, err = s.Canary(ctx, canaryOf(park, replay.Selector{All: true}, 1))
	if err != nil || !errors.Is(res.Err(), replay.ErrNotAllDone) || res.Done != 3 || res.Failed != 1 || len(steps) != 1 || steps[0].Replayed != 1 {
		t.Fatalf("a step of 1 behind a message with no origin: %+v, steps %+v, %v; want m-0 in the step, m-1 and m-2 after, n-1 failed once", res, steps, err)
	}
	brokertest.WaitDepth(t, dest, 3, 10*time.Second)
	brokertest.WaitDepth(t, park, 1, 10*time.Second)
}

// TestCanaryRestSkipsACopyThatCameBackLate: a copy of step 1 that comes
// back after the step's wait is under the run's loop guard: the rest
// skips it (it stays parked) and replays the others.
func TestCanaryRestSkipsACopyThatCameBackLate(t *testing.T) {
	ch, park, dest := threeParked(t)
	s, _ := openSession(t, replay.Config{})
	o := canaryOf(park, replay.Selector{All: true}, 1)
	o.OnStep = func(replay.CanaryStep) {
		// The copy fails downstream and parks again, after the wait.
		failsLate(t, ch, dest, park)
	}
	res, steps, err := s.Canary(testCtx(t, time.Minute), o)
	if err != nil || len(steps) != 1 || res.Done != 3 || res.Skipped != 1 {
		t.Fatalf("%+v, steps %+v, %v; want 3 done (1 in the step, 2 after), the late copy skipped", res, steps, err)
	}
	brokertest.WaitDepth(t, park, 1, 10*time.Second)
	brokertest.WaitDepth(t, dest, 2, 10*time.Second)
}

// TestCanaryByIDsReportsMissingOnlyWhatNoStepFound: each step of a canary
// by id is a run of its own over the same ids; an id an earlier step
// replayed whole is not "no message in queue" for the next step or the
// rest, and an id no step found still is. A ramp whose last step finds
// nothing left ends without a failure.
func TestCanaryByIDsReportsMissingOnlyWhatNoStepFound(t *testing.T) {
	ch := brokertest.Channel(t)
	park, dest := brokertest.Name(t, "parking-lot"), brokertest.Name(t, "dest")
	brokertest.DeclareQueue(t, ch, park, nil)
	brokertest.DeclareQueue(t, ch, dest, nil)
	publish := func(ids ...string) {
		var msgs []amqp.Publishing
		for _, id := range ids {
			msgs = append(msgs, parkedFor(id, `{"id":"`+id+`"}`, "boom", dest))
		}
		brokertest.PublishMany(t, ch, "", park, msgs)
		brokertest.WaitDepth(t, park, len(ids), 10*time.Second)
	}
	s, _ := openSession(t, replay.Config{})
	ctx := testCtx(t, time.Minute)

	publish("a", "b", "c")
	res, steps, err := s.Canary(ctx, canaryOf(park, replay.Selector{IDs: []string{"a", "b", "c"}}, 1))
	if err != nil || res.Done != 3 || res.Failed != 0 || len(steps) != 1 {
		t.Fatalf("a canary of 1 by 3 ids: %+v (failures %v), steps %+v, %v; want 3 done, none failed", res, res.Failures, steps, err)
	}
	brokertest.WaitDepth(t, dest, 3, 10*time.Second)
	brokertest.Purge(t, ch, dest)

	publish("d", "e")
	o := canaryOf(park, replay.Selector{IDs: []string{"d", "e"}}, 1)
	o.Steps = []int{1, 1, 1}
	res, steps, err = s.Canary(ctx, o)
	if err != nil || res.Done != 2 || res.Failed != 0 || len(steps) != 2 {
		t.Fatalf("a ramp of 1,1,1 by 2 ids: %+v (failures %v), steps %+v, %v; want 2 done in two steps, none failed", res, res.Failures, steps, err)
	}
	brokertest.WaitDepth(t, dest, 2, 10*time.Second)
	brokertest.Purge(t, ch, dest)

	publish("f")
	res, _, err = s.Canary(ctx, canaryOf(park, replay.Selector{IDs: []string{"f", "nowhere"}}, 1))
	if !errors.Is(err, replay.ErrNotAllDone) && !errors.Is(res.Err(), replay.ErrNotAllDone) {
		t.Errorf("a canary with an id not in the queue: %v, want not all done", err)
	}
	if res.Done != 1 || res.Failed != 1 || len(res.Failures) != 1 || res.Failures[0].ID != "nowhere" {
		t.Errorf("a canary with an id not in the queue: %+v (failures %v); want f done, nowhere failed", res, res.Failures)
	}

	// A step its ids do not fill reports the missing id; the rest does
	// not report it again.
	publish("g")
	res, _, err = s.Canary(ctx, canaryOf(park, replay.Selector{IDs: []string{"g", "nowhere"}}, 2))
	if res.Done != 1 || res.Failed != 1 || len(res.Failures) != 1 || res.Failures[0].ID != "nowhere" {
		t.Errorf("a canary of 2 by g and an id not in the queue: %+v (failures %v), %v; want g done, nowhere failed once", res, res.Failures, err)
	}
	// A later step that finds only a missing id tested nothing and failed
	// nothing: it does not say none could be replayed.
	publish("h")
	o = canaryOf(park, replay.Selector{IDs: []string{"h", "nowhere"}}, 1)
	o.Steps = []int{1, 10}
	res, _, err = s.Canary(ctx, o)
	var none *replay.CanaryNoneReplayedError
	if errors.As(err, &none) || res.Done != 1 || res.Failed != 1 || len(res.Failures) != 1 || res.Failures[0].ID != "nowhere" {
		t.Errorf("a ramp of 1,10 by h and an id not in the queue: %+v (failures %v), %v; want h done, nowhere failed once", res, res.Failures, err)
	}
	brokertest.WaitDepth(t, park, 0, 10*time.Second)
}

// TestCanaryCopyComingBackInALaterStepsWaitStops: a copy of step 1 that
// fails after step 1's wait and parks again during step 2's stops the run
// there (exit 4), the rest stay parked.
func TestCanaryCopyComingBackInALaterStepsWaitStops(t *testing.T) {
	ch, park, dest := threeParked(t)
	s, _ := openSession(t, replay.Config{})
	o := canaryOf(park, replay.Selector{All: true}, 1)
	o.Steps = []int{1, 1}
	o.Proceed = func(_ context.Context, st replay.CanaryStep) bool {
		if st.Step == 1 {
			// Step 1's copy fails downstream and parks again, late.
			failsLate(t, ch, dest, park)
		}
		return true
	}
	res, steps, err := s.Canary(testCtx(t, time.Minute), o)
	var back *replay.CameBackError
	if !errors.As(err, &back) || back.Step.Step != 2 || back.Step.CameBack != 1 || back.Step.Watched != 2 || back.Step.Replayed != 1 {
		t.Fatalf("%+v, steps %+v, %v; want step 2 to see 1 of the 2 copies come back", res, steps, err)
	}
	if res.Done != 2 {
		t.Errorf("%d done, want 2 (one a step)", res.Done)
	}
	// Step 1's copy, parked again, and the message no step sent.
	brokertest.WaitDepth(t, park, 2, 10*time.Second)
	brokertest.WaitDepth(t, dest, 1, 10*time.Second)
}

// threeParked is a parking lot of three messages (m-0, m-1, m-2) whose
// origin is the queue dest.
func threeParked(t *testing.T) (ch *amqp.Channel, park, dest string) {
	t.Helper()
	ch = brokertest.Channel(t)
	park, dest = brokertest.Name(t, "parking-lot"), brokertest.Name(t, "dest")
	brokertest.DeclareQueue(t, ch, park, nil)
	brokertest.DeclareQueue(t, ch, dest, nil)
	var msgs []amqp.Publishing
	for i := range 3 {
		msgs = append(msgs, parkedFor(fmt.Sprintf("m-%d", i), fmt.Sprintf(`{"n":%d}`, i), "boom", dest))
	}
	brokertest.PublishMany(t, ch, "", park, msgs)
	brokertest.WaitDepth(t, park, 3, 10*time.Second)
	return ch, park, dest
}

// failsLate takes the one copy a step sent to dest and parks it again, as
// a consumer failing it downstream would (its x-replay-id kept).
func failsLate(t *testing.T, ch *amqp.Channel, dest, park string) {
	t.Helper()
	back := brokertest.Drain(t, ch, dest)
	if len(back) != 1 {
		t.Fatalf("the step sent %d copies, want 1", len(back))
	}
	d := back[0]
	brokertest.PublishMany(t, ch, "", park, []amqp.Publishing{{MessageId: d.MessageId, Body: d.Body, Headers: d.Headers}})
	brokertest.WaitDepth(t, park, 3, 10*time.Second)
}

// TestCanaryKeepsToTheCountConfirmed: a canary bounded by Limit (the
// count a person confirmed) sends no more across its steps and the rest;
// the message parked last stays.
func TestCanaryKeepsToTheCountConfirmed(t *testing.T) {
	ch, park, dest := threeParked(t)
	s, _ := openSession(t, replay.Config{})
	o := canaryOf(park, replay.Selector{All: true}, 1)
	o.Limit = 2
	res, steps, err := s.Canary(testCtx(t, time.Minute), o)
	if err != nil || res.Done != 2 || len(steps) != 1 {
		t.Fatalf("a canary of 1 bounded by 2: %+v, steps %+v, %v; want 2 done", res, steps, err)
	}
	if got := brokertest.Drain(t, ch, park); len(got) != 1 || got[0].MessageId != "m-2" {
		t.Errorf("%s after: %d message(s), want m-2 alone", park, len(got))
	}
	brokertest.WaitDepth(t, dest, 2, 10*time.Second)
}
