//go:build integration

package replay_test

import (
	"errors"
	"os"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker/brokertest"
	"github.com/parkinglot/parkinglot/replay"
)

type editFixture struct {
	ch     *amqp.Channel
	q, dst string
	s      *replay.Session
}

func newEditFixture(t *testing.T) editFixture {
	ch := brokertest.Channel(t)
	s, _ := openSession(t, replay.Config{})
	f := editFixture{ch: ch, q: brokertest.Name(t, "dlq"), dst: brokertest.Name(t, "dst"), s: s}
	brokertest.DeclareQueue(t, ch, f.q, nil)
	brokertest.DeclareQueue(t, ch, f.dst, nil)
	brokertest.Publish(t, ch, "", f.q, amqp.Publishing{MessageId: "order-7", ContentType: "application/json",
		Body: []byte(`{"amount":"12,50"}`), Headers: amqp.Table{"x-last-error": "amount is not a number", "x-original-exchange": "", "x-original-routing-key": f.dst}})
	return f
}

// edit writes body to a draft of order-7, as an editor would, and
// finishes the edit; the draft's file is gone after it.
func (f editFixture) edit(t *testing.T, body string) (replay.Result, error) {
	t.Helper()
	ctx := testCtx(t, 30*time.Second)
	d, err := f.s.PrepareEdit(ctx, f.q, "order-7")
	if err != nil {
		t.Fatalf("prepare edit: %v", err)
	}
	if err := os.WriteFile(d.Path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	res, err := f.s.FinishEdit(ctx, d, replay.Options{})
	if _, serr := os.Stat(d.Path); !os.IsNotExist(serr) {
		t.Errorf("edit file %s left behind", d.Path)
	}
	return res, err
}

// An edited body is replayed to the origin, audited as an edit. (ui/cli
// tests the editor and what `edit` prints.)
func TestEditReplaysEditedBody(t *testing.T) {
	f := newEditFixture(t)
	res, err := f.edit(t, `{"amount":12.5}`)
	if err != nil || res.Done != 1 {
		t.Fatalf("edit: %v, done %d", err, res.Done)
	}
	got := drainAll(t, f.ch, f.dst, 1)
	if len(got) != 1 {
		t.Fatalf("%d messages at the destination, want 1", len(got))
	}
	assertReplayed(t, got[0], "order-7", []byte(`{"amount":12.5}`))
	brokertest.WaitDepth(t, f.q, 0, 15*time.Second)
	es := auditEntries(t, f.s.AuditPath)
	if len(es) != 1 || es[0].Action != "edit" || es[0].Result != "ok" || es[0].MessageID != "order-7" {
		t.Errorf("audit %+v: want one edit entry", es)
	}
}

// A body invalid for its content type is ErrInvalidBody: nothing sent,
// the message still parked.
func TestEditRefusesInvalidJSONNothingSent(t *testing.T) {
	f := newEditFixture(t)
	_, err := f.edit(t, `{"amount": 12.5,`)
	if !errors.Is(err, replay.ErrInvalidBody) {
		t.Errorf("edit: %v, want ErrInvalidBody", err)
	}
	brokertest.WaitDepth(t, f.q, 1, 15*time.Second)
	if n := brokertest.Depth(t, f.ch, f.dst); n != 0 {
		t.Fatalf("an invalid edit sent %d messages", n)
	}
}
