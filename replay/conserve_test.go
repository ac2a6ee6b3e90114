//go:build integration

package replay_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/broker/brokertest"
	"github.com/parkinglot/parkinglot/replay"
)

// waitListed polls the management API until a connection whose name has
// the prefix is listed (it lists new connections only after a few
// seconds).
func waitListed(t *testing.T, m *broker.Management, prefix string) {
	t.Helper()
	brokertest.Eventually(t, 30*time.Second, 200*time.Millisecond, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		conns, err := m.Connections(ctx)
		if err != nil {
			return false
		}
		for _, c := range conns {
			if strings.HasPrefix(c.ClientName(), prefix) {
				return true
			}
		}
		return false
	}, func() string { return fmt.Sprintf("connection %q never listed by the management API", prefix) })
}

// Force-closing the publishing and then the consuming connection during a
// 5,000-message replay loses nothing: every message is in the parking lot
// or at the destination, duplicates stay within the in-flight window and
// the read-ahead and carry the same x-replay-id, and every removed message has its audit
// entry.
func TestForcedConnectionCloseDuringReplayLosesNothing(t *testing.T) {
	const n, window = 5000, 512
	ch := brokertest.Channel(t)
	mgmt := brokertest.Management(t)
	q := brokertest.Name(t, "dlq")
	dst := brokertest.Name(t, "dst")
	warm := brokertest.Name(t, "warm")
	for _, name := range []string{q, dst, warm} {
		brokertest.DeclareQueue(t, ch, name, nil)
	}
	body := bytes.Repeat([]byte("x"), 1024)
	publishN(t, ch, "", q, n, func(i int) amqp.Publishing {
		return amqp.Publishing{MessageId: idOf(i), Body: body, DeliveryMode: amqp.Persistent, Headers: amqp.Table{"x-last-error": "boom"}}
	})

	s, name := openSession(t, replay.Config{})
	ctx := testCtx(t, 120*time.Second)
	// A first small run opens the publishing connection, so both are
	// listed (and can be closed) before the big run starts.
	brokertest.Publish(t, ch, "", warm, amqp.Publishing{MessageId: "warm", Body: []byte("w")})
	if res, err := s.Replay(ctx, replay.Options{Queue: warm, Select: replay.Selector{All: true}, To: dest("", dst)}); err != nil || res.Done != 1 {
		t.Fatalf("warm-up: %v %+v", err, res)
	}
	drainAll(t, ch, dst, 1)
	waitListed(t, mgmt, name+" consume")
	waitListed(t, mgmt, name+" publish")

	kill := make(chan string, 2)
	var closed atomic.Int32
	killerDone := make(chan struct{})
	go func() {
		defer close(killerDone)
		for role := range kill {
			if c := brokertest.CloseConnections(t, mgmt, name+" "+role); c > 0 {
				closed.Add(1)
			}
		}
	}()
	var pubSent, conSent atomic.Bool
	res, err := s.Replay(ctx, replay.Options{Queue: q, Select: replay.Selector{All: true}, To: dest("", dst), Window: window, Rate: 2500,
		Progress: func(e replay.Event) {
			if e.Kind != replay.EventReplayed {
				return
			}
			if e.Done >= 1000 && pubSent.CompareAndSwap(false, true) {
				kill <- "publish"
			}
			if e.Done >= 3000 && conSent.CompareAndSwap(false, true) {
				kill <- "consume"
			}
		}})
	close(kill)
	<-killerDone
	if err != nil {
		t.Fatalf("replay: %v (%+v)", err, res)
	}
	if closed.Load() != 2 {
		t.Fatalf("closed %d connections, want 2 (the test did not inject its faults)", closed.Load())
	}
	t.Logf("result: done %d failed %d; notes %v; failures %v", res.Done, res.Failed, res.Notes, res.Failures)

	parked := map[string]int{}
	for _, d := range drainAll(t, ch, q, 0) {
		parked[d.MessageId]++
	}
	arrived := map[string][]string{} // id → replay ids of its copies
	for _, d := range drainAll(t, ch, dst, n) {
		rid, _ := d.Headers["x-replay-id"].(string)
		arrived[d.MessageId] = append(arrived[d.MessageId], rid)
	}
	dups, lost, both := 0, 0, 0
	for i := range n {
		id := idOf(i)
		copies := arrived[id]
		if parked[id] == 0 && len(copies) == 0 {
			lost++
			t.Errorf("%s lost: neither parked nor delivered", id)
		}
		if parked[id] > 0 && len(copies) > 0 {
			both++ // delivered, and its parked copy came back: replayed again later
		}
		for _, rid := range copies[min(1, len(copies)):] {
			dups++
			if rid != copies[0] {
				t.Errorf("%s: duplicate with another x-replay-id (%s, %s)", id, copies[0], rid)
			}
		}
	}
	// Per fault: the window in flight, and the jobs read ahead (256) and
	// one held back by the rate, sent after the consuming connection was
	// lost.
	if bound := 2 * (window + 256 + 1); dups > bound {
		t.Errorf("%d duplicates; want at most the in-flight window and the read-ahead per fault (%d)", dups, bound)
	}
	if res.Done+len(parked) < n || res.Failed != 0 {
		t.Errorf("done %d + parked %d of %d, failed %d", res.Done, len(parked), n, res.Failed)
	}
	brokertest.Figures(t, "replay conservation: messages=%d forced_closes=%d lost=%d duplicates=%d (same x-replay-id) delivered_and_still_parked=%d still_parked=%d window=%d",
		n, closed.Load(), lost, dups, both, len(parked), window)

	audited := map[string]bool{}
	for _, e := range auditEntries(t, s.AuditPath) {
		if e.Action == "replay" && e.Result == "ok" {
			audited[e.MessageID] = true
		}
	}
	for i := range n {
		if id := idOf(i); parked[id] == 0 && !audited[id] {
			t.Errorf("%s was removed from the parking lot without an audit entry", id)
		}
	}
}

// Interrupting a run (Ctrl-C cancels the context) stops taking messages,
// waits for the confirms of what was sent, and loses nothing; what it read
// ahead and never sent is counted not sent, not failed, and has no audit
// entry: the audit log holds exactly what was done. Its progress counts
// toward the whole selection, not toward what was read ahead.
func TestInterruptedReplayLosesNothing(t *testing.T) {
	const n = 1000
	ch := brokertest.Channel(t)
	q := brokertest.Name(t, "dlq")
	dst := brokertest.Name(t, "dst")
	brokertest.DeclareQueue(t, ch, q, nil)
	brokertest.DeclareQueue(t, ch, dst, nil)
	parkPlain(t, ch, q, n)
	s, _ := openSession(t, replay.Config{})
	ctx, cancel := context.WithCancel(testCtx(t, 60*time.Second))
	defer cancel()
	var wrongTotal atomic.Int64
	res, err := s.Replay(ctx, replay.Options{Queue: q, Select: replay.Selector{All: true}, To: dest("", dst), Rate: 1000,
		Progress: func(e replay.Event) {
			if e.Kind == replay.EventReplayed && e.Total != n {
				wrongTotal.Store(int64(e.Total))
			}
			if e.Kind == replay.EventReplayed && e.Done >= 200 {
				cancel()
			}
		}})
	if tot := wrongTotal.Load(); tot != 0 {
		t.Errorf("progress counted toward %d, want the selection's %d (not what was read ahead)", tot, n)
	}
	if err == nil || ctx.Err() == nil {
		t.Fatalf("interrupted run returned %v; want the context's error", err)
	}
	if res.Done < 200 || res.Done >= n {
		t.Fatalf("done %d: want the run stopped early", res.Done)
	}
	if res.Failed != 0 || res.NotSent == 0 || res.Done+res.NotSent > n {
		t.Errorf("done %d, failed %d, not sent %d of %d: want none failed and the read-ahead not sent", res.Done, res.Failed, res.NotSent, n)
	}
	entries := auditEntries(t, s.AuditPath)
	for _, e := range entries {
		if e.Result != "ok" {
			t.Errorf("audit entry %s %s: %s, want only what was done", e.MessageID, e.Result, e.Error)
		}
	}
	if len(entries) != res.Done {
		t.Errorf("%d audit entries, want the %d done", len(entries), res.Done)
	}
	brokertest.WaitDepth(t, dst, res.Done, 15*time.Second)
	brokertest.WaitDepth(t, q, n-res.Done, 15*time.Second)
	t.Logf("interrupted: done %d, not sent %d (read ahead), audit entries %d", res.Done, res.NotSent, len(entries))
}

// An audit log that cannot be opened stops the run before anything is
// sent or removed.
func TestUnwritableAuditLogChangesNothing(t *testing.T) {
	ch := brokertest.Channel(t)
	q := brokertest.Name(t, "dlq")
	dst := brokertest.Name(t, "dst")
	brokertest.DeclareQueue(t, ch, q, nil)
	brokertest.DeclareQueue(t, ch, dst, nil)
	parkPlain(t, ch, q, 5)
	s, _ := openSession(t, replay.Config{})
	s.AuditPath = "/dev/null/parkinglot/audit.jsonl"
	ctx := testCtx(t, 30*time.Second)
	if _, err := s.Replay(ctx, replay.Options{Queue: q, Select: replay.Selector{All: true}, To: dest("", dst)}); err == nil || !strings.Contains(err.Error(), "audit log") {
		t.Fatalf("replay with an unwritable audit log: %v", err)
	}
	if _, err := s.Delete(ctx, replay.DeleteOptions{Queue: q, Select: replay.Selector{All: true}}); err == nil {
		t.Fatalf("delete with an unwritable audit log succeeded")
	}
	brokertest.WaitDepth(t, q, 5, 15*time.Second)
	if got := brokertest.Depth(t, ch, dst); got != 0 {
		t.Fatalf("%d messages sent", got)
	}
}
