//go:build integration

package ui

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker/brokertest"
	"github.com/parkinglot/parkinglot/replay"
)

// The TUI's browse session (the real backend the screens call) over quorum
// parking lots with delivery limits 20 and 3, a hundred times: nothing is
// lost or changed, and the browse says what it did to keep it so.
func TestTUIBrowseSessionQuorumParkingLot100TimesLosesNothing(t *testing.T) {
	for _, limit := range []int32{20, 3} {
		t.Run(fmt.Sprintf("delivery_limit_%d", limit), func(t *testing.T) {
			ch := brokertest.Channel(t)
			q := brokertest.Name(t, "dlq")
			brokertest.DeclareQueue(t, ch, q, amqp.Table{"x-queue-type": "quorum", "x-delivery-limit": limit})
			const n = 30
			msgs := make([]amqp.Publishing, n)
			for i := range msgs {
				msgs[i] = amqp.Publishing{MessageId: fmt.Sprintf("m-%02d", i), Body: []byte(fmt.Sprintf(`{"n":%d}`, i)), ContentType: "application/json",
					Headers: amqp.Table{"x-last-error": fmt.Sprintf("transfer %d not found", i)}}
			}
			brokertest.PublishMany(t, ch, "", q, msgs)

			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			s, err := replay.Open(ctx, replay.Connection{URL: brokertest.URL(), ManagementURL: brokertest.ManagementURL(), Vhost: "/"}, replay.Config{}, "parkinglot-test tui-browse", nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = s.Close() })
			backend := NewSessionBackend(s)

			refreshed, noted := 0, false
			for pass := 1; pass <= 100; pass++ {
				var streamed atomic.Int64
				res, err := backend.Browse(ctx, BrowseRequest{Queue: q, OnBatch: func(b []replay.Summary) { streamed.Add(int64(len(b))) }})
				if err != nil {
					t.Fatalf("pass %d: %v", pass, err)
				}
				if got := streamed.Load(); got != n {
					t.Fatalf("pass %d streamed %d summaries, want %d (report %+v)", pass, got, n, res.Report)
				}
				if res.Messages != nil {
					_ = res.Messages.Close()
				}
				refreshed += res.Report.Refreshed
				noted = noted || len(res.Report.Notes) > 0
			}
			if !noted {
				t.Fatal("the browse never said how it protects the delivery limit")
			}
			seen := map[string]bool{}
			for _, d := range brokertest.Drain(t, ch, q) {
				if seen[d.MessageId] {
					t.Fatalf("%s is in the queue twice", d.MessageId)
				}
				seen[d.MessageId] = true
			}
			if len(seen) != n {
				t.Fatalf("%d of %d messages left after 100 browses", len(seen), n)
			}
			brokertest.Figures(t, "tui browse: delivery_limit=%d messages=%d passes=100 refreshed=%d lost=%d", limit, n, refreshed, n-len(seen))
		})
	}
}
