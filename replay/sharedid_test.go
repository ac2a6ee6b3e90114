//go:build integration

package replay_test

import (
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker/brokertest"
	"github.com/parkinglot/parkinglot/replay"
)

// An id several messages share (package doc, "Identity": identical
// messages without a message_id share a content id; an import run twice
// leaves two copies of one message_id) chooses every one of them: acting
// on it acts on all, and the summary counts each.

// sharedIDLot declares a parking lot whose messages name their origin
// (x-original-exchange/-routing-key) and a destination queue bound there.
func sharedIDLot(t *testing.T, ch *amqp.Channel) (parking, dest, ex, key string) {
	t.Helper()
	parking, dest = brokertest.Name(t, "dlq"), brokertest.Name(t, "main")
	ex, key = brokertest.Name(t, "main.exchange"), "payment.execute"
	brokertest.DeclareExchange(t, ch, ex, "direct")
	brokertest.DeclareQueue(t, ch, parking, nil)
	brokertest.DeclareQueue(t, ch, dest, nil)
	bind(t, ch, dest, ex, key)
	return parking, dest, ex, key
}

// parkTwice parks two identical copies of one message (messageID "" for
// none).
func parkTwice(t *testing.T, ch *amqp.Channel, parking, ex, key, messageID string) {
	t.Helper()
	for range 2 {
		brokertest.Publish(t, ch, "", parking, amqp.Publishing{
			MessageId: messageID, ContentType: "application/json", DeliveryMode: amqp.Persistent,
			Body: []byte(`{"amount":12}`),
			Headers: amqp.Table{
				"x-original-exchange": ex, "x-original-routing-key": key,
				"x-last-error": "connection timeout calling bank",
			},
		})
	}
	brokertest.WaitDepth(t, parking, 2, 15*time.Second)
}

// sharedID lists the parking lot and returns the one id both messages carry.
func sharedID(t *testing.T, s *replay.Session, parking string) string {
	t.Helper()
	b, err := s.Browse(testCtx(t, 30*time.Second), replay.BrowseOptions{Queue: parking})
	if err != nil {
		t.Fatalf("browse: %v", err)
	}
	if len(b.Summaries) != 2 || b.Summaries[0].ID != b.Summaries[1].ID {
		t.Fatalf("want two messages sharing an id, got %+v", b.Summaries)
	}
	return b.Summaries[0].ID
}

func TestSharedContentIDDeleteRemovesEveryCopy(t *testing.T) {
	ch := brokertest.Channel(t)
	parking, _, ex, key := sharedIDLot(t, ch)
	parkTwice(t, ch, parking, ex, key, "")
	s, _ := openSession(t, replay.Config{})
	id := sharedID(t, s, parking)
	if !strings.HasPrefix(id, "sha256:") {
		t.Fatalf("id %q: want a content id", id)
	}

	// The plan of a replay by that id names both, and changes nothing.
	plan, err := s.Plan(testCtx(t, 30*time.Second), replay.Options{Queue: parking, Select: replay.Selector{IDs: []string{id}}})
	if err != nil {
		t.Fatalf("plan: %v", err)
	}
	if plan.Chosen != 2 || len(plan.Items) != 2 || plan.MissingCount != 0 {
		t.Fatalf("plan by a shared id: chosen %d, items %d, missing %d; want 2, 2, 0", plan.Chosen, len(plan.Items), plan.MissingCount)
	}
	if plan.Report.Seen != 2 {
		t.Errorf("the plan's pass saw %d messages, want 2 (the whole queue)", plan.Report.Seen)
	}
	brokertest.WaitDepth(t, parking, 2, 15*time.Second)

	// Deleting by that id removes both, each with its audit entry. (ui/cli
	// tests what the dry run and the delete print.)
	res, err := s.Delete(testCtx(t, 30*time.Second), replay.DeleteOptions{Queue: parking, Select: replay.Selector{IDs: []string{id}}})
	if err != nil || res.Done != 2 {
		t.Fatalf("delete by a shared id: %v, done %d; want 2", err, res.Done)
	}
	brokertest.WaitDepth(t, parking, 0, 15*time.Second)
	if n := len(auditEntries(t, s.AuditPath)); n != 2 {
		t.Errorf("audit log has %d entries, want 2", n)
	}
}

func TestSharedMessageIDReplayMovesEveryCopy(t *testing.T) {
	ch := brokertest.Channel(t)
	parking, dest, ex, key := sharedIDLot(t, ch)
	parkTwice(t, ch, parking, ex, key, "pay-twice")
	other := brokertest.Name(t, "other")
	brokertest.Publish(t, ch, "", parking, amqp.Publishing{MessageId: other, Body: []byte("x"),
		Headers: amqp.Table{"x-original-exchange": ex, "x-original-routing-key": key}})
	brokertest.WaitDepth(t, parking, 3, 15*time.Second)
	s, _ := openSession(t, replay.Config{})

	res, err := s.Replay(testCtx(t, 60*time.Second), replay.Options{Queue: parking, Select: replay.Selector{IDs: []string{"pay-twice"}}})
	if err != nil {
		t.Fatalf("replay: %v", err)
	}
	if res.Done != 2 || res.Failed != 0 {
		t.Fatalf("replay by a shared message_id: done %d failed %d (%+v); want 2 done", res.Done, res.Failed, res.Failures)
	}
	brokertest.WaitDepth(t, dest, 2, 15*time.Second)
	brokertest.WaitDepth(t, parking, 1, 15*time.Second)
	b, err := s.Browse(testCtx(t, 30*time.Second), replay.BrowseOptions{Queue: parking})
	if err != nil {
		t.Fatalf("browse: %v", err)
	}
	if len(b.Summaries) != 1 || b.Summaries[0].ID != other {
		t.Fatalf("left parked: %+v; want only %s", b.Summaries, other)
	}
	for _, d := range drainAll(t, ch, dest, 2) {
		assertReplayed(t, d, "pay-twice", []byte(`{"amount":12}`))
	}
}

func TestSharedIDExportRemoveTakesEveryCopy(t *testing.T) {
	ch := brokertest.Channel(t)
	parking, _, ex, key := sharedIDLot(t, ch)
	parkTwice(t, ch, parking, ex, key, "pay-export")
	s, _ := openSession(t, replay.Config{})
	file := t.TempDir() + "/out.jsonl"
	res, err := s.Export(testCtx(t, 30*time.Second), replay.ExportOptions{Queue: parking, Select: replay.Selector{IDs: []string{"pay-export"}}, File: file, Remove: true})
	if err != nil {
		t.Fatalf("export: %v", err)
	}
	if res.Done != 2 {
		t.Fatalf("export --remove by a shared id: done %d, want 2", res.Done)
	}
	brokertest.WaitDepth(t, parking, 0, 15*time.Second)
}
