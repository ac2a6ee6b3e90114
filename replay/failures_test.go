//go:build integration

package replay_test

import (
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/broker/brokertest"
	"github.com/parkinglot/parkinglot/replay"
)

func parkPlain(t testing.TB, ch *amqp.Channel, queue string, n int) {
	t.Helper()
	publishN(t, ch, "", queue, n, func(i int) amqp.Publishing {
		return amqp.Publishing{MessageId: idOf(i), Body: []byte("body " + idOf(i)), DeliveryMode: amqp.Persistent,
			Headers: amqp.Table{"x-last-error": "boom"}}
	})
}

// An exchange with no binding for the key: every copy comes back as
// basic.return, nothing is removed, each message not done as unroutable
// (the CLI exits 3 with a line each; ui/cli tests that).
func TestReplayUnroutableLeavesMessagesParked(t *testing.T) {
	ch := brokertest.Channel(t)
	q := brokertest.Name(t, "dlq")
	ex := brokertest.Name(t, "nobody.bound")
	brokertest.DeclareQueue(t, ch, q, nil)
	brokertest.DeclareExchange(t, ch, ex, "direct")
	parkPlain(t, ch, q, 3)

	s, _ := openSession(t, replay.Config{})
	res, err := s.Replay(testCtx(t, 60*time.Second), replay.Options{Queue: q, Select: replay.Selector{All: true}, To: dest(ex, "nowhere")})
	if err != nil || !errors.Is(res.Err(), replay.ErrNotAllDone) || res.Failed != 3 || len(res.Failures) != 3 {
		t.Fatalf("replay: %v, result %+v: want 3 not done", err, res)
	}
	for i, f := range res.Failures {
		if f.ID != idOf(i) || !strings.Contains(f.Err, "unroutable") {
			t.Errorf("failure %+v: want %s unroutable", f, idOf(i))
		}
	}
	brokertest.WaitDepth(t, q, 3, 15*time.Second)
	for _, e := range auditEntries(t, s.AuditPath) {
		if e.Result != "unroutable" {
			t.Errorf("audit entry %+v: want result unroutable", e)
		}
	}
}

// A missing exchange is one clear reason per message, not the broker's
// raw error, and loses nothing.
func TestReplayMissingExchangeIsClearAndLosesNothing(t *testing.T) {
	ch := brokertest.Channel(t)
	q := brokertest.Name(t, "dlq")
	brokertest.DeclareQueue(t, ch, q, nil)
	parkPlain(t, ch, q, 2)
	missing := brokertest.Name(t, "no.such.exchange")

	s, _ := openSession(t, replay.Config{})
	res, err := s.Replay(testCtx(t, 60*time.Second), replay.Options{Queue: q, Select: replay.Selector{All: true}, To: dest(missing, "rk")})
	if err != nil || res.Failed != 2 || len(res.Failures) != 2 {
		t.Fatalf("replay: %v, result %+v: want 2 not done", err, res)
	}
	want := `exchange "` + missing + `" does not exist in vhost "/"`
	for _, f := range res.Failures {
		if !strings.Contains(f.Err, want) || strings.Contains(f.Err, "Exception") || strings.Contains(f.Err, "NOT_FOUND") {
			t.Errorf("failure %+v: want %q, not the broker's raw error", f, want)
		}
	}
	brokertest.WaitDepth(t, q, 2, 15*time.Second)
}

// A destination queue that refuses publishes (full, reject-publish): the
// broker nacks, the message stays parked.
func TestReplayNackedByFullQueueStaysParked(t *testing.T) {
	ch := brokertest.Channel(t)
	q := brokertest.Name(t, "dlq")
	full := brokertest.Name(t, "full")
	brokertest.DeclareQueue(t, ch, q, nil)
	brokertest.DeclareQueue(t, ch, full, amqp.Table{"x-max-length": int32(1), "x-overflow": "reject-publish"})
	brokertest.Publish(t, ch, "", full, amqp.Publishing{Body: []byte("filler")})
	parkPlain(t, ch, q, 2)

	s, _ := openSession(t, replay.Config{})
	res, err := s.Replay(testCtx(t, 60*time.Second), replay.Options{Queue: q, Select: replay.Selector{All: true}, To: dest("", full)})
	if err != nil {
		t.Fatal(err)
	}
	if res.Done != 0 || res.Failed != 2 || !errors.Is(res.Err(), replay.ErrNotAllDone) {
		t.Fatalf("result %+v: want 2 failed", res)
	}
	for _, f := range res.Failures {
		if !strings.Contains(f.Err, broker.ErrNacked.Error()) {
			t.Errorf("failure %+v: want the nack reason", f)
		}
	}
	brokertest.WaitDepth(t, q, 2, 15*time.Second)
	brokertest.WaitDepth(t, full, 1, 15*time.Second)
}

// Every command's engine call on a queue that is not there is
// broker.ErrNotFound, saying which queue in which vhost.
func TestMissingQueueIsNotFound(t *testing.T) {
	s, _ := openSession(t, replay.Config{})
	ctx := testCtx(t, 60*time.Second)
	q := brokertest.Name(t, "absent")
	want := `no queue "` + q + `" in vhost "/"`
	all := replay.Selector{All: true}
	for what, call := range map[string]func() error{
		"browse": func() error { _, err := s.Browse(ctx, replay.BrowseOptions{Queue: q}); return err },
		"find":   func() error { _, _, err := s.Find(ctx, q, "x"); return err },
		"replay": func() error { _, err := s.Replay(ctx, replay.Options{Queue: q, Select: all}); return err },
		"delete": func() error { _, err := s.Delete(ctx, replay.DeleteOptions{Queue: q, Select: all}); return err },
		"export": func() error { _, err := s.Export(ctx, replay.ExportOptions{Queue: q, Out: io.Discard}); return err },
	} {
		if err := call(); !errors.Is(err, broker.ErrNotFound) || err.Error() != want {
			t.Errorf("%s: %v, want %q", what, err, want)
		}
	}
}

// Without the management API what can work does, and says what is
// missing: the browse says why, the route preview is unavailable, the
// replay works, the queue list needs it. (ui/cli tests what the commands
// print.)
func TestWithoutManagementAPIPreviewUnavailableRestWorks(t *testing.T) {
	ch := brokertest.Channel(t)
	q := brokertest.Name(t, "dlq")
	dst := brokertest.Name(t, "dst")
	brokertest.DeclareQueue(t, ch, q, nil)
	brokertest.DeclareQueue(t, ch, dst, nil)
	parkPlain(t, ch, q, 2)
	ctx := testCtx(t, 60*time.Second)
	conn := testConnection()
	conn.ManagementURL = "http://guest:guest@127.0.0.1:1"
	s, err := replay.Open(ctx, conn, replay.Config{}, brokertest.Name(t, ""), nil)
	if err != nil {
		t.Fatalf("open session: %v", err)
	}
	s.AuditPath = filepath.Join(t.TempDir(), "audit.jsonl")
	defer s.Close()

	b, err := s.Browse(ctx, replay.BrowseOptions{Queue: q})
	if err != nil || len(b.Summaries) != 2 || b.Summaries[1].ID != idOf(1) || !errors.Is(b.Management, broker.ErrNoManagement) {
		t.Fatalf("browse without the API: %v, %d listed, management %v", err, len(b.Summaries), b.Management)
	}
	plan, err := s.Plan(ctx, replay.Options{Queue: q, Select: replay.Selector{All: true}, To: dest("", dst)})
	if err != nil || len(plan.Routes) != 1 || plan.Routes[0].Available ||
		!errors.Is(plan.Routes[0].Unavailable, broker.ErrNoManagement) || strings.Contains(plan.Routes[0].Unavailable.Error(), "guest:guest") {
		t.Fatalf("plan without the API: %v, routes %+v", err, plan.Routes)
	}
	res, err := s.Replay(ctx, replay.Options{Queue: q, Select: replay.Selector{All: true}, To: dest("", dst)})
	if err != nil || res.Done != 2 {
		t.Fatalf("replay without the API: %v, %+v", err, res)
	}
	brokertest.WaitDepth(t, dst, 2, 15*time.Second)
	if _, err := s.Queues(ctx); !errors.Is(err, broker.ErrNoManagement) {
		t.Errorf("queues without the API: %v, want ErrNoManagement", err)
	}
}

// A replay writes its copy's headers into the held delivery's own table,
// except where the pass keeps that delivery to put it back itself: a
// quorum parking lot's message one give-back from its delivery limit,
// which the pass re-publishes rather than give back. Its copy unroutable,
// the message put back is the parked one as it was (its retry count kept,
// no replay id), on every version (a reject with requeue counts on all).
func TestReplayOfAMessageNearItsDeliveryLimitPutsItBackUnchanged(t *testing.T) {
	ch := brokertest.Channel(t)
	q := brokertest.Name(t, "dlq")
	ex := brokertest.Name(t, "nobody.bound")
	brokertest.DeclareQueue(t, ch, q, amqp.Table{"x-queue-type": "quorum", "x-delivery-limit": int32(2)})
	brokertest.DeclareExchange(t, ch, ex, "direct")
	publishN(t, ch, "", q, 1, func(i int) amqp.Publishing {
		return amqp.Publishing{MessageId: idOf(i), Body: []byte("body"), DeliveryMode: amqp.Persistent,
			Headers: amqp.Table{"x-last-error": "boom", "x-retry-count": int32(3), "tenant": "acme"}}
	})
	brokertest.WaitDepth(t, q, 1, 15*time.Second)
	d, ok, err := ch.Get(q, false)
	if err != nil || !ok {
		t.Fatalf("get: %v (got one: %v)", err, ok)
	}
	if err := d.Reject(true); err != nil { // one failed delivery: the next give-back would be the limit's
		t.Fatal(err)
	}
	brokertest.WaitDepth(t, q, 1, 15*time.Second)

	s, _ := openSession(t, replay.Config{})
	res, err := s.Replay(testCtx(t, 60*time.Second), replay.Options{Queue: q, Select: replay.Selector{All: true}, To: dest(ex, "nowhere")})
	if err != nil || res.Failed != 1 || res.Pass.Refreshed != 1 {
		t.Fatalf("replay: %v, result %+v: want 1 not done, its message refreshed", err, res)
	}
	brokertest.WaitDepth(t, q, 1, 15*time.Second)
	d = getOne(t, ch, q)
	if d.MessageId != idOf(0) || d.Headers["x-retry-count"] != int32(3) || d.Headers["tenant"] != "acme" {
		t.Errorf("message put back: id %q, headers %v: want %s with its own headers", d.MessageId, d.Headers, idOf(0))
	}
	for _, k := range []string{"x-replay-id", "x-replay-count", "x-replayed-at"} {
		if v, ok := d.Headers[k]; ok {
			t.Errorf("message put back carries its copy's %s (%v)", k, v)
		}
	}
}
