package benchtest

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/parkinglot/parkinglot/broker/brokertest"
	amqp "github.com/rabbitmq/amqp091-go"
)

// This file holds what the benchmarks share: seeding queues fast, the raw
// amqp091-go baselines each benchmark measures in the same run, and the
// figures line they print. The baselines use amqp091-go directly, with no
// parkinglot code between them and the broker.

// BenchWindow is how many publishes the seeding and the raw confirmed
// publish baseline keep unconfirmed (the raw baselines use 512).
const BenchWindow = 512

// ConfirmedPublish publishes n messages made by mk to exchange/key with
// mandatory and publisher confirms, keeping up to window unconfirmed, on a
// connection of its own; it fails the benchmark unless every message was
// confirmed and routed, and returns how long it took. It seeds queues, and
// it is the raw confirmed-publish baseline.
func ConfirmedPublish(tb testing.TB, exchange, key string, n, window int, mk func(i int) amqp.Publishing) time.Duration {
	tb.Helper()
	conn := brokertest.RawDial(tb, "publish "+tb.Name())
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		tb.Fatalf("open channel: %v", err)
	}
	if err := ch.Confirm(false); err != nil {
		tb.Fatalf("confirm mode: %v", err)
	}
	// Buffers hold a whole window: amqp091-go drops a notification that
	// waits on a full channel for 5s.
	confirms := ch.NotifyPublish(make(chan amqp.Confirmation, window+1))
	returns := ch.NotifyReturn(make(chan amqp.Return, window+1))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	outstanding := 0
	wait := func() {
		select {
		case c, ok := <-confirms:
			if !ok {
				tb.Fatalf("publish to %s/%s: channel closed", exchange, key)
			}
			if !c.Ack {
				tb.Fatalf("publish to %s/%s: nacked (tag %d)", exchange, key, c.DeliveryTag)
			}
			outstanding--
		case r := <-returns:
			tb.Fatalf("publish to %s/%s returned unroutable: %s", exchange, key, r.ReplyText)
		case <-ctx.Done():
			tb.Fatalf("publish to %s/%s: no confirm: %v", exchange, key, ctx.Err())
		}
	}
	start := time.Now()
	for i := 0; i < n; i++ {
		for outstanding >= window {
			wait()
		}
		if err := ch.PublishWithContext(ctx, exchange, key, true, false, mk(i)); err != nil {
			tb.Fatalf("publish to %s/%s: %v", exchange, key, err)
		}
		outstanding++
	}
	for outstanding > 0 {
		wait()
	}
	elapsed := time.Since(start)
	select {
	case r := <-returns:
		tb.Fatalf("publish to %s/%s returned unroutable: %s", exchange, key, r.ReplyText)
	default:
	}
	_ = ch.Close()
	return elapsed
}

// RawConsumeAck consumes n messages from queue with the given prefetch and
// acks each one as it arrives (basic.ack, single), the plain amqp091-go
// consumer loop; it returns how long the n messages took.
func RawConsumeAck(tb testing.TB, queue string, n, prefetch int) time.Duration {
	tb.Helper()
	conn := brokertest.RawDial(tb, "consume "+tb.Name())
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		tb.Fatalf("open channel: %v", err)
	}
	if err := ch.Qos(prefetch, 0, false); err != nil {
		tb.Fatalf("qos: %v", err)
	}
	start := time.Now()
	d, err := ch.Consume(queue, "", false, false, false, false, nil)
	if err != nil {
		tb.Fatalf("consume %s: %v", queue, err)
	}
	timeout := time.NewTimer(10 * time.Minute)
	defer timeout.Stop()
	for got := 0; got < n; got++ {
		select {
		case m, ok := <-d:
			if !ok {
				tb.Fatalf("consume %s: channel closed after %d of %d", queue, got, n)
			}
			if err := m.Ack(false); err != nil {
				tb.Fatalf("ack: %v", err)
			}
		case <-timeout.C:
			tb.Fatalf("consume %s: %d of %d after 10 minutes", queue, got, n)
		}
	}
	elapsed := time.Since(start)
	_ = ch.Close()
	return elapsed
}

// RawHoldBrowse is the raw hold-unacked browse: it consumes n messages
// with no prefetch limit and no acks, holding every delivery, then gives
// them all back with one basic.nack(multiple, requeue). It returns the time
// to receive all n (the scan) and the time until the give-back was sent.
func RawHoldBrowse(tb testing.TB, queue string, n int) (scan, total time.Duration) {
	tb.Helper()
	conn := brokertest.RawDial(tb, "browse "+tb.Name())
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		tb.Fatalf("open channel: %v", err)
	}
	if err := ch.Qos(0, 0, false); err != nil { // 0: unlimited, so every message is pushed
		tb.Fatalf("qos: %v", err)
	}
	start := time.Now()
	d, err := ch.Consume(queue, "", false, false, false, false, nil)
	if err != nil {
		tb.Fatalf("consume %s: %v", queue, err)
	}
	timeout := time.NewTimer(10 * time.Minute)
	defer timeout.Stop()
	var last uint64
	for got := 0; got < n; got++ {
		select {
		case m, ok := <-d:
			if !ok {
				tb.Fatalf("browse %s: channel closed after %d of %d", queue, got, n)
			}
			last = m.DeliveryTag
		case <-timeout.C:
			tb.Fatalf("browse %s: %d of %d after 10 minutes", queue, got, n)
		}
	}
	scan = time.Since(start)
	if err := ch.Nack(last, true, true); err != nil {
		tb.Fatalf("give back: %v", err)
	}
	total = time.Since(start)
	_ = ch.Close()
	return scan, total
}

// NaiveMove is the naive replay: n times basic.get from src, publish the
// message to exchange/key (mandatory), wait for its confirm, then ack it.
// It returns how long the n messages took.
func NaiveMove(tb testing.TB, src, exchange, key string, n int) time.Duration {
	tb.Helper()
	conn := brokertest.RawDial(tb, "naive "+tb.Name())
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		tb.Fatalf("open channel: %v", err)
	}
	if err := ch.Confirm(false); err != nil {
		tb.Fatalf("confirm mode: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	start := time.Now()
	for i := 0; i < n; i++ {
		m, ok, err := ch.Get(src, false)
		if err != nil {
			tb.Fatalf("get from %s: %v", src, err)
		}
		if !ok {
			tb.Fatalf("get from %s: empty after %d of %d", src, i, n)
		}
		dc, err := ch.PublishWithDeferredConfirmWithContext(ctx, exchange, key, true, false, amqp.Publishing{
			Headers: m.Headers, ContentType: m.ContentType, DeliveryMode: m.DeliveryMode,
			MessageId: m.MessageId, Timestamp: m.Timestamp, Body: m.Body,
		})
		if err != nil {
			tb.Fatalf("publish: %v", err)
		}
		if ok, err := dc.WaitContext(ctx); err != nil || !ok {
			tb.Fatalf("publish not confirmed: %v", err)
		}
		if err := m.Ack(false); err != nil {
			tb.Fatalf("ack: %v", err)
		}
	}
	elapsed := time.Since(start)
	_ = ch.Close()
	return elapsed
}

// ShovelMove moves every message of src to dst with a dynamic shovel, as
// the management UI's "Move messages" does (ack-mode on-confirm,
// src-delete-after queue-length, the UI's prefetch of 1000), and returns
// the time from the PUT until src is empty and dst holds want messages.
func ShovelMove(tb testing.TB, src, dst string, want int) time.Duration {
	tb.Helper()
	name := fmt.Sprintf("parkinglot-bench-move-%s-%d", src, time.Now().UnixNano())
	value := map[string]any{
		"src-protocol":             "amqp091",
		"src-uri":                  "amqp:///%2F",
		"src-queue":                src,
		"src-prefetch-count":       1000,
		"src-delete-after":         "queue-length",
		"dest-protocol":            "amqp091",
		"dest-uri":                 "amqp:///%2F",
		"dest-queue":               dst,
		"dest-add-forward-headers": false,
		"ack-mode":                 "on-confirm",
	}
	path := "/parameters/shovel/%2F/" + url.PathEscape(name)
	tb.Cleanup(func() { _ = brokertest.ManagementRequest(http.MethodDelete, path, nil) })
	conn := brokertest.RawDial(tb, "shovel watch "+tb.Name())
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		tb.Fatalf("open channel: %v", err)
	}
	start := time.Now()
	if err := brokertest.ManagementRequest(http.MethodPut, path, map[string]any{"value": value}); err != nil {
		tb.Fatalf("create shovel: %v", err)
	}
	deadline := start.Add(10 * time.Minute)
	for {
		s, err := ch.QueueDeclarePassive(src, true, false, false, false, nil)
		if err != nil {
			tb.Fatalf("inspect %s: %v", src, err)
		}
		d, err := ch.QueueDeclarePassive(dst, true, false, false, false, nil)
		if err != nil {
			tb.Fatalf("inspect %s: %v", dst, err)
		}
		if s.Messages == 0 && d.Messages >= want {
			break
		}
		if time.Now().After(deadline) {
			tb.Fatalf("shovel %s → %s: %d left, %d moved after 10 minutes", src, dst, s.Messages, d.Messages)
		}
		time.Sleep(10 * time.Millisecond) // polling the broker; 10ms is <0.1% of a 100k move
	}
	elapsed := time.Since(start)
	_ = ch.Close()
	// The copies are all there, but the shovel may not have acked the last
	// originals yet (ack-mode on-confirm acks after the destination's
	// confirm): deleting it now would requeue them into src. With
	// src-delete-after it removes itself once every original is acked
	// (RabbitMQ docs, "Dynamic Shovels"), so wait for that; delete it only
	// if it lingers.
	for gone := time.Now().Add(time.Minute); time.Now().Before(gone); time.Sleep(20 * time.Millisecond) {
		var se *brokertest.StatusError
		if err := brokertest.ManagementRequest(http.MethodGet, path, nil); errors.As(err, &se) && se.Code == http.StatusNotFound {
			return elapsed
		}
	}
	_ = brokertest.ManagementRequest(http.MethodDelete, path, nil)
	return elapsed
}

// GiveBackWithin is how long n given-back messages may take to be ready
// again: a classic queue on 3.10.8 made a million given back ready at
// 1,600–2,400 a second (measured: 885k after 9 minutes), so it allows 500
// a second (WaitDepth returns as soon as they are).
func GiveBackWithin(n int) time.Duration {
	return time.Minute + time.Duration(n/500)*time.Second
}

// Rate is msgs per second over d.
func Rate(msgs int, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(msgs) / d.Seconds()
}

// figure prints a rate without decimals and a small figure (milliseconds
// a frame) with enough of them.
func figure(v float64) string {
	if v >= 100 {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.3g", v)
}

// Body is a body of n bytes (JSON, so content-type checks pass) that
// differs per message.
func Body(i, n int) []byte {
	head := fmt.Sprintf(`{"id":%d,"pad":"`, i)
	tail := `"}`
	pad := n - len(head) - len(tail)
	if pad < 0 {
		pad = 0
	}
	return []byte(head + strings.Repeat("x", pad) + tail)
}

// BenchCount is $PARKINGLOT_BENCH_N when set (a quicker run while
// profiling), else def.
func BenchCount(tb testing.TB, def int) int {
	tb.Helper()
	if n, ok := envCount(tb, "PARKINGLOT_BENCH_N"); ok {
		return n
	}
	return def
}

// BigBenchDefault is the size of the big benchmarks' parking lot (the
// 1M lines).
const BigBenchDefault = 1_000_000

// BigBenchCount is the count of a big benchmark (the 1M lines), which runs
// only when $PARKINGLOT_BENCH_BIG=1 (it needs a quiet machine, ~1.5 GB of
// queue and several minutes) and is skipped otherwise. The count is
// $PARKINGLOT_BENCH_BIG_N when set; else ten times $PARKINGLOT_BENCH_N
// when that scales the run down (100k → 1M); else BigBenchDefault.
func BigBenchCount(tb testing.TB) int {
	tb.Helper()
	if os.Getenv("PARKINGLOT_BENCH_BIG") != "1" {
		tb.Skip("the 1M benchmarks run with PARKINGLOT_BENCH_BIG=1 (go doc ./broker/brokertest/benchtest)")
	}
	if n, ok := envCount(tb, "PARKINGLOT_BENCH_BIG_N"); ok {
		return n
	}
	if n, ok := envCount(tb, "PARKINGLOT_BENCH_N"); ok {
		return 10 * n
	}
	return BigBenchDefault
}

// CountLabel names a count in a figures line's name: 1M, 100k, 20k, 2500.
func CountLabel(n int) string {
	switch {
	case n >= 1_000_000 && n%1_000_000 == 0:
		return fmt.Sprintf("%dM", n/1_000_000)
	case n >= 1000 && n%1000 == 0:
		return fmt.Sprintf("%dk", n/1000)
	}
	return fmt.Sprint(n)
}

func envCount(tb testing.TB, name string) (int, bool) {
	tb.Helper()
	s := os.Getenv(name)
	if s == "" {
		return 0, false
	}
	var n int
	if _, err := fmt.Sscan(s, &n); err != nil || n <= 0 {
		tb.Fatalf("%s=%q: want a positive number", name, s)
	}
	return n, true
}

// rawPipe opens what a raw consume-and-republish loop needs: a consuming
// channel with prefetch on a connection of its own, and a publishing
// channel in confirm mode on another, with room for a whole window of
// confirms (amqp091-go drops a confirm that waits on a full channel for
// 5 s). The connections close when the test ends.
func rawPipe(tb testing.TB, what string, prefetch, window int) (cch, pch *amqp.Channel, confirms <-chan amqp.Confirmation) {
	tb.Helper()
	cconn := brokertest.RawDial(tb, what+" consume "+tb.Name())
	tb.Cleanup(func() { _ = cconn.Close() })
	pconn := brokertest.RawDial(tb, what+" publish "+tb.Name())
	tb.Cleanup(func() { _ = pconn.Close() })
	cch, err := cconn.Channel()
	if err != nil {
		tb.Fatalf("open channel: %v", err)
	}
	if err := cch.Qos(prefetch, 0, false); err != nil {
		tb.Fatalf("qos: %v", err)
	}
	if pch, err = pconn.Channel(); err != nil {
		tb.Fatalf("open channel: %v", err)
	}
	if err := pch.Confirm(false); err != nil {
		tb.Fatalf("confirm mode: %v", err)
	}
	return cch, pch, pch.NotifyPublish(make(chan amqp.Confirmation, window+1))
}

// RawRetryLoop is the retry path written with amqp091-go alone, as fast
// as it goes: it consumes queue with prefetch; a delivery without the
// header retriedHeader is published again to exchange/key with the
// delivery's headers, those of retried (the same table for every copy)
// and retriedHeader = 1 (mandatory, confirmed, up to window unconfirmed,
// on a connection of its own) and acked once its copy is confirmed; a
// delivery with the header is acked at once. It returns how long it took
// until n messages came back and were acked: the broker's ceiling for a
// pattern in which every message is retried once through a TTL tier that
// dead-letters it back. The headers a copy carries are part of that
// ceiling: the broker decodes and re-encodes them when it dead-letters the
// copy.
func RawRetryLoop(tb testing.TB, queue, exchange, key, retriedHeader string, retried amqp.Table, n, prefetch, window int) time.Duration {
	tb.Helper()
	cch, pch, confirms := rawPipe(tb, "retry", prefetch, window)
	returns := pch.NotifyReturn(make(chan amqp.Return, window+1))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	start := time.Now()
	deliveries, err := cch.Consume(queue, "", false, false, false, false, nil)
	if err != nil {
		tb.Fatalf("consume %s: %v", queue, err)
	}
	// Publish tags are 1, 2, …; waiting[tag] is the delivery to ack once
	// that copy is confirmed.
	var tag uint64
	waiting := map[uint64]uint64{}
	var backlog []amqp.Delivery // first attempts waiting for room in the window
	done := 0
	for done < n {
		for len(backlog) > 0 && len(waiting) < window {
			d := backlog[0]
			backlog = backlog[1:]
			h := amqp.Table{}
			for k, v := range d.Headers {
				h[k] = v
			}
			for k, v := range retried {
				h[k] = v
			}
			h[retriedHeader] = int32(1)
			if err := pch.PublishWithContext(ctx, exchange, key, true, false, amqp.Publishing{
				Headers: h, ContentType: d.ContentType, DeliveryMode: d.DeliveryMode, MessageId: d.MessageId, Body: d.Body,
			}); err != nil {
				tb.Fatalf("publish: %v", err)
			}
			tag++
			waiting[tag] = d.DeliveryTag
		}
		select {
		case d, ok := <-deliveries:
			if !ok {
				tb.Fatalf("consume %s: channel closed", queue)
			}
			if _, retried := d.Headers[retriedHeader]; retried {
				if err := d.Ack(false); err != nil {
					tb.Fatalf("ack: %v", err)
				}
				done++
				continue
			}
			backlog = append(backlog, d)
		case c := <-confirms:
			if !c.Ack {
				tb.Fatalf("copy nacked")
			}
			if err := cch.Ack(waiting[c.DeliveryTag], false); err != nil {
				tb.Fatalf("ack: %v", err)
			}
			delete(waiting, c.DeliveryTag)
		case r := <-returns:
			tb.Fatalf("copy returned: %s", r.ReplyText)
		case <-ctx.Done():
			tb.Fatalf("raw retry loop: %d of %d after 20 minutes", done, n)
		}
	}
	elapsed := time.Since(start)
	_ = cch.Close()
	_ = pch.Close()
	return elapsed
}
