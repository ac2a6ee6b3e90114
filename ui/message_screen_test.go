package ui

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/retrycore"
)

// A message that carries neither x-last-error nor x-retry-count (NestJS,
// kombu: only the broker's x-death) is not shown with invented values
// under those header names: the derived error and attempts have
// parkinglot's own labels and say where they come from; 4.3's counters are
// shown with what each counts.
func TestDetailDerivedValuesUnderOwnLabels(t *testing.T) {
	fb := newFakeBackend(t.TempDir())
	q := "orders.dlq"
	fb.queues = []QueueRow{{QueueInfo: broker.QueueInfo{Name: q}, ParkingLot: true}}
	fb.add(q, "nest-1", "x", time.Minute, `{}`)
	fb.mu.Lock()
	h := amqp.Table{
		"x-death": []any{
			amqp.Table{"queue": "orders.process", "reason": "rejected", "count": int64(1), "exchange": "orders", "routing-keys": []any{"order.created"}, "time": testNow},
		},
		retrycore.HeaderDeliveryCount: int64(0), retrycore.HeaderAcquiredCount: int64(3),
	}
	fm := &fb.messages[q][0]
	fm.msg.Headers = h
	fm.sum.Facts = retrycore.Decode(h)
	fb.mu.Unlock()

	hs := newHarness(t, fb, q, 120, 40)
	hs.until("loaded", hs.loaded)
	hs.press("enter")
	hs.until("message loaded", func() bool { s, ok := hs.m.top().(*messageScreen); return ok && s.msg != nil })
	content := ansi.Strip(hs.m.top().(*messageScreen).content())
	why := content[:strings.Index(content, "Death history")]
	for _, bad := range []string{retrycore.HeaderLastError, retrycore.HeaderRetryCount} {
		if strings.Contains(why, bad) {
			t.Errorf("%s shown for a message that does not carry it:\n%s", bad, why)
		}
	}
	for _, want := range []string{
		"error                   dead-lettered: rejected in orders.process  (from x-death)",
		"attempts                1  (x-death: 1 rejection in orders.process)",
		"x-delivery-count        0  (failed deliveries on RabbitMQ 4.3",
		"x-acquired-count        3  (every hand-out, including parkinglot's browses)",
	} {
		if !strings.Contains(why, want) {
			t.Errorf("lacks %q:\n%s", want, why)
		}
	}
}
