package replay

import (
	"context"
	"hash/maphash"
	"strconv"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/retrycore"
)

// parkedForBench is a message as the replay benchmark parks it
// (benchtest.Parked): 1 KiB body, the header contract and one x-death.
func parkedForBench(i int) broker.Message {
	now := time.Now().Truncate(time.Second)
	return broker.Message{
		Properties: broker.Properties{MessageID: "bench-" + strconv.Itoa(1000000+i), ContentType: "application/json", DeliveryMode: 2, Timestamp: now},
		Body:       make([]byte, 1024),
		Headers: amqp.Table{
			"x-original-exchange":    "main.exchange",
			"x-original-routing-key": "payment.execute",
			"x-original-queue":       "main.queue",
			"x-retry-count":          int32(3),
			"x-last-error":           "context deadline exceeded after 30s",
			"x-first-failed-at":      now.Add(-time.Minute),
			"x-parked-at":            now,
			"x-failure-kind":         "retries-exhausted",
			"x-death": []any{amqp.Table{
				"count": int64(3), "reason": "expired", "queue": "payment.retry.15s", "time": now,
				"exchange": "retry.exchange", "routing-keys": []any{"payment.retry.15s"},
			}},
			"tenant": "acme",
		},
		Exchange: "errors", RoutingKey: "payment", DeliveryTag: uint64(i + 1),
	}
}

// BenchmarkReplayClientWork is the client work a replay adds to a raw
// move, a message at a time, without the broker: choosing it (summary,
// selection, loop guard), preparing its copy, keeping it in flight, and
// committing it (its audit line; counted as done). The frames, the acks and
// the fsync are left out: the raw move has the first two, and the fsync is
// a batch's. It profiles the replay's own per-message code (`go test
// ./replay -run '^$' -bench ClientWork -cpuprofile …`); make bench measures
// the whole.
func BenchmarkReplayClientWork(b *testing.B) {
	const batch = 256
	msgs := make([]broker.Message, batch)
	ctx := context.Background()
	r := &run{tally: newTally(func(Event) {}), seed: maphash.MakeSeed(), sent: map[uint64]struct{}{},
		outstanding: map[string][]pendingCopy{}, failedKeys: map[string]int{}, failedNow: map[string]int{}, runID: NewRunID()}
	defer r.confirmed.reset()
	a := &auditLog{user: AuditUser{OS: "oncall", AMQP: "guest"}}
	p := &publisher{inflight: map[uint64]*flight{}, byRID: map[string]*flight{}}
	sel, err := newSelection(Selector{All: true}, false)
	if err != nil {
		b.Fatal(err)
	}
	w := r.walk("payment.parking", sel, retrycore.OriginQuery{ParkingLot: "payment.parking"})
	prepare := replayPrepare("payment.parking", TargetOrigin, "replay")
	out := make([]settled, 0, batch)
	var entries []AuditEntry
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i += batch {
		// A replay's copy takes its delivery's headers (one table a
		// delivery, as amqp091-go decoded it): fresh ones each batch.
		b.StopTimer()
		for k := range msgs {
			msgs[k] = parkedForBench(k)
		}
		b.StartTimer()
		out = out[:0]
		for k := range batch {
			c, ok := w.choose(ctx, &broker.Held{Message: msgs[k]}, time.Now())
			if !ok {
				b.Fatal("not chosen")
			}
			j, _ := r.jobFor(c, prepare)
			if j == nil {
				b.Fatal("no job")
			}
			p.track(j)
			s, _ := p.settle(p.tag, true)
			out = append(out, s)
		}
		entries = r.entriesOf(entries, out)
		a.encode(entries)
		for _, s := range out {
			if r.doneFor(s.job) {
				r.tally.done(EventReplayed, s.job.id, &s.job.dest, s.job.replayID, s.job.resets)
			}
		}
	}
}
