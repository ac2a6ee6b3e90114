//go:build integration

package broker_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/broker/brokertest"
	"github.com/parkinglot/parkinglot/broker/brokertest/benchtest"
)

// BenchmarkPassScan is the broker layer of a browse on its own: a pass
// over a 100,000-message classic queue (1 KiB persistent messages with a
// parked message's headers) that holds every delivery, stores it in a
// spool and gives everything back, alternated round by round with the raw
// hold-unacked consume of the same queue (brokertest, "Benchmark method"). replay's BenchmarkBrowse
// adds the decoding, origins and error groups on top of this.
func BenchmarkPassScan(b *testing.B) {
	n := benchtest.BenchCount(b, 100_000)
	ch := brokertest.Channel(b)
	conn := brokertest.Dial(b, "")
	mgmt := brokertest.Management(b)
	q := brokertest.Name(b, "q")
	brokertest.DeclareQueue(b, ch, q, nil)
	now := time.Now().Truncate(time.Second)
	benchtest.ConfirmedPublish(b, "", q, n, benchtest.BenchWindow, func(i int) amqp.Publishing {
		return amqp.Publishing{
			MessageId: fmt.Sprintf("bench-%07d", i), ContentType: "application/json", DeliveryMode: amqp.Persistent,
			Timestamp: now, Body: benchtest.Body(i, 1024),
			Headers: amqp.Table{
				"x-original-exchange": "main.exchange", "x-original-routing-key": "payment.execute",
				"x-retry-count": int32(3), "x-last-error": fmt.Sprintf("transfer %d not found", i),
				"x-parked-at": now, "x-failure-kind": "retries-exhausted",
				"x-death": []any{amqp.Table{"count": int64(3), "reason": "expired", "queue": "payment.retry.15s",
					"time": now, "exchange": "retry.exchange", "routing-keys": []any{"payment.retry.15s"}}},
			},
		}
	})
	rounds := benchtest.BenchRounds(b)
	for iter := 0; iter < b.N; iter++ {
		b.StopTimer()
		passRun := func(int) float64 {
			spool, err := broker.NewSpool(b.TempDir())
			if err != nil {
				b.Fatal(err)
			}
			defer spool.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			b.StartTimer()
			start := time.Now()
			p, err := broker.OpenPass(ctx, conn, broker.PassOptions{Queue: q, Management: mgmt})
			if err != nil {
				b.Fatal(err)
			}
			seen := 0
			for {
				h, err := p.Next(ctx)
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					b.Fatal(err)
				}
				if _, err := spool.Append(h.Message); err != nil {
					b.Fatal(err)
				}
				seen++
			}
			if _, err := p.Close(ctx); err != nil {
				b.Fatal(err)
			}
			took := time.Since(start)
			b.StopTimer()
			if seen != n {
				b.Fatalf("the pass saw %d of %d", seen, n)
			}
			brokertest.WaitDepth(b, q, n, time.Minute)
			return benchtest.Rate(n, took)
		}
		rawRun := func(int) float64 {
			_, raw := benchtest.RawHoldBrowse(b, q, n)
			brokertest.WaitDepth(b, q, n, time.Minute)
			return benchtest.Rate(n, raw)
		}
		r := benchtest.Alternate(b, rounds, passRun, rawRun)
		benchtest.BenchLine(b, "pass-scan-vs-raw-hold", n, r, "")
		benchtest.BenchNote("pass scan: %s msg/s; raw hold %s msg/s", benchtest.RoundFigures(r.Measured), benchtest.RoundFigures(r.Baseline))
	}
}
