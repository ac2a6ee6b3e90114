//go:build integration

package replay_test

import (
	"bytes"
	"errors"
	"reflect"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/broker/brokertest"
	"github.com/parkinglot/parkinglot/replay"
)

// Find, what `show` reads, returns a message as it was parked: headers of
// odd types decoded, a 16 MiB body whole, and gives everything back; a
// missing id is broker.ErrNotFound saying how many messages were looked
// at. (ui/cli's show tests render them.)
func TestFindBodiesAndHeaders(t *testing.T) {
	ch := brokertest.Channel(t)
	q := brokertest.Name(t, "dlq")
	brokertest.DeclareQueue(t, ch, q, nil)
	huge := bytes.Repeat([]byte("0123456789"), 16<<20/10)
	odd := amqp.Table{"deep": []any{amqp.Decimal{Scale: 2, Value: 1234}, nil, float32(1.5)}}
	brokertest.PublishMany(t, ch, "", q, []amqp.Publishing{
		{MessageId: "json", ContentType: "application/json", Body: []byte(`{"a":{"b":1}}`), Headers: amqp.Table{
			"a-first": "x", "x-retry-count": int8(2), "x-last-error": "boom", "x-death": "not an array",
			"odd": odd, "bad": "\xff\xfe"}},
		{MessageId: "bin", ContentType: "application/octet-stream", Body: []byte{0, 1, 2, 0xff}},
		{MessageId: "huge", Body: huge},
	})
	s, _ := openSession(t, replay.Config{})
	ctx := testCtx(t, 60*time.Second)

	m, sum, err := s.Find(ctx, q, "json")
	if err != nil {
		t.Fatal(err)
	}
	if string(m.Body) != `{"a":{"b":1}}` || m.Properties.ContentType != "application/json" || sum.ID != "json" {
		t.Errorf("json: body %q, content type %q, summary id %q", m.Body, m.Properties.ContentType, sum.ID)
	}
	for k, want := range map[string]any{"a-first": "x", "x-retry-count": int8(2), "x-last-error": "boom", "x-death": "not an array", "odd": odd, "bad": "\xff\xfe"} {
		if got := m.Headers[k]; !reflect.DeepEqual(got, want) {
			t.Errorf("header %s = %#v, want %#v", k, got, want)
		}
	}
	if sum.Facts.Error != "boom" {
		t.Errorf("summary's error %q, want boom", sum.Facts.Error)
	}

	m, _, err = s.Find(ctx, q, "bin")
	if err != nil || !bytes.Equal(m.Body, []byte{0, 1, 2, 0xff}) {
		t.Errorf("bin: %v, body %x", err, m.Body)
	}
	m, sum, err = s.Find(ctx, q, "huge")
	if err != nil || !bytes.Equal(m.Body, huge) || sum.BodySize != len(huge) {
		t.Errorf("huge: %v, %d bytes, summary %d", err, len(m.Body), sum.BodySize)
	}

	_, _, err = s.Find(ctx, q, "nope")
	if !errors.Is(err, broker.ErrNotFound) || err.Error() != `no message "nope" in queue "`+q+`" (3 messages looked at)` {
		t.Errorf("missing id: %v", err)
	}
	brokertest.WaitDepth(t, q, 3, 15*time.Second)
}

// A browse with a limit lists the first messages in queue order and gives
// them back; Queues marks a queue named like a parking lot as one.
func TestListLimitAndQueues(t *testing.T) {
	ch := brokertest.Channel(t)
	q := brokertest.Name(t, "orders.dlq")
	brokertest.DeclareQueue(t, ch, q, nil)
	parkPlain(t, ch, q, 30)
	s, _ := openSession(t, replay.Config{})
	ctx := testCtx(t, 60*time.Second)
	var ids []string
	if _, err := s.Browse(ctx, replay.BrowseOptions{Queue: q, Limit: 5, StreamOnly: true, OnBatch: func(batch []replay.Summary) {
		for _, m := range batch {
			ids = append(ids, m.ID)
		}
	}}); err != nil {
		t.Fatal(err)
	}
	if want := []string{idOf(0), idOf(1), idOf(2), idOf(3), idOf(4)}; !reflect.DeepEqual(ids, want) {
		t.Errorf("browse --limit 5: %v, want %v", ids, want)
	}
	brokertest.WaitDepth(t, q, 30, 15*time.Second)
	rows, err := s.Queues(ctx)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, r := range rows {
		if r.Name == q {
			found = r.ParkingLot
		}
	}
	if !found {
		t.Errorf("Queues does not mark %s as a parking lot: %+v", q, rows)
	}
}
