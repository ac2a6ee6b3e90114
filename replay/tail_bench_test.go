//go:build integration

package replay_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker/brokertest"
	"github.com/parkinglot/parkinglot/broker/brokertest/benchtest"
	"github.com/parkinglot/parkinglot/replay"
)

// BenchmarkTail: PARKINGLOT_BENCH_N messages (default 20,000) published
// (confirmed, as fast as the broker takes them: well past 5,000 msg/s)
// through the exchange that feeds a parking lot, seen by a tail of it,
// against a raw auto-ack consumer of an exclusive queue with the same
// binding, alternated; each timed from the first publish to the last
// message seen. The tail must keep up (it drops nothing it is not told).
func BenchmarkTail(b *testing.B) {
	n := benchtest.BenchCount(b, 20_000)
	ch := brokertest.Channel(b)
	ex, lot := brokertest.Name(b, "feed"), brokertest.Name(b, "tail.dlq")
	brokertest.DeclareExchange(b, ch, ex, "fanout")
	brokertest.DeclareQueue(b, ch, lot, nil)
	if err := ch.QueueBind(lot, "", ex, false, nil); err != nil {
		b.Fatal(err)
	}
	s, _ := openSession(b, replay.Config{})
	publish := func() {
		benchtest.ConfirmedPublish(b, ex, "", n, benchtest.BenchWindow, func(i int) amqp.Publishing { return benchtest.Parked(i, benchtest.ParkedOrigin{}) })
	}
	r := benchtest.Alternate(b, benchtest.BenchRounds(b), func(int) float64 {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var seen atomic.Int64
		all, ready := make(chan struct{}), make(chan struct{})
		var res replay.TailResult
		done := make(chan error, 1)
		go func() {
			var err error
			res, err = s.Tail(ctx, replay.TailOptions{Queues: []string{lot},
				OnTapped: func(replay.TailSetup) { close(ready) },
				OnArrival: func(replay.TailArrival) {
					if seen.Add(1) == int64(n) {
						close(all)
					}
				}})
			done <- err
		}()
		<-ready
		b.StartTimer()
		t0 := time.Now()
		publish()
		<-all
		d := time.Since(t0)
		b.StopTimer()
		cancel()
		if err := <-done; err != nil || res.Dropped != 0 {
			b.Fatalf("the tail: %v, dropped %d", err, res.Dropped)
		}
		brokertest.Purge(b, ch, lot)
		return benchtest.Rate(n, d)
	}, func(int) float64 {
		conn := brokertest.RawDial(b, "raw tail")
		defer conn.Close()
		rch, err := conn.Channel()
		if err != nil {
			b.Fatal(err)
		}
		q, err := rch.QueueDeclare("", false, true, true, false, nil)
		if err == nil {
			err = rch.QueueBind(q.Name, "", ex, false, nil)
		}
		deliveries, cerr := rch.Consume(q.Name, "", true, true, false, false, nil)
		if err != nil || cerr != nil {
			b.Fatal(err, cerr)
		}
		t0 := time.Now()
		publish()
		for range n {
			<-deliveries
		}
		d := time.Since(t0)
		brokertest.Purge(b, ch, lot)
		return benchtest.Rate(n, d)
	})
	benchtest.BenchLine(b, benchtest.DescribeBenchQueue(b, lot).Name("tail-"+benchtest.CountLabel(n))+"-vs-raw-consumer", n, r, "")
}
