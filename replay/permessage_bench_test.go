package replay

import (
	"context"
	"hash/maphash"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/broker/brokertest/benchtest"
	"github.com/parkinglot/parkinglot/retrycore"
)

// parkedForBench is the replay benchmark's parked message i
// (benchtest.Parked) as a pass holds it.
func parkedForBench(i int) broker.Message {
	p := benchtest.Parked(i, benchtest.ParkedOrigin{Exchange: "main.exchange", RoutingKey: "payment.execute", Queue: "main.queue"})
	return broker.FromDelivery(amqp.Delivery{Headers: p.Headers, ContentType: p.ContentType, DeliveryMode: p.DeliveryMode,
		MessageId: p.MessageId, Timestamp: p.Timestamp, Body: p.Body, Exchange: "errors", RoutingKey: "payment", DeliveryTag: uint64(i + 1)})
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
	sel, err := newSelection(Selector{All: true}, false, nil)
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
