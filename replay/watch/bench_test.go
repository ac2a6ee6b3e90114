//go:build integration

package watch_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker/brokertest"
	"github.com/parkinglot/parkinglot/broker/brokertest/benchtest"
	"github.com/parkinglot/parkinglot/replay"
	"github.com/parkinglot/parkinglot/replay/watch"
)

// benchLots declares ten parking lots of BenchQueueType, nine of 1,000
// parked messages and one of big, and deletes them at the end.
func benchLots(b *testing.B, big int) []string {
	b.Helper()
	lots := make([]string, 10)
	for i := range lots {
		n := 1000
		if i == 0 {
			n = big
		}
		lots[i] = benchtest.BenchParkingLot(b, fmt.Sprintf("lot%d.dlq", i), n)
	}
	return lots
}

func benchSession(b *testing.B) *replay.Session {
	b.Helper()
	s, err := replay.Open(context.Background(), replay.Connection{URL: brokertest.URL(), ManagementURL: brokertest.ManagementURL(), Vhost: "/"},
		replay.Config{}, "bench watch", nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.Close() })
	return s
}

// BenchmarkWatchRead: one read of ten parking lots (depth and oldest
// age), one of them big (PARKINGLOT_BENCH_N, default 100,000), against
// the 1 s budget and against the same reads written with amqp091-go and
// net/http alone (one management GET per queue, and on a classic queue a
// basic.get given back). A scrape serves what the last read kept.
func BenchmarkWatchRead(b *testing.B) { benchWatchRead(b, benchtest.BenchCount(b, 100_000)) }

// BenchmarkWatchRead1M is BenchmarkWatchRead with a 1,000,000-message
// parking lot (PARKINGLOT_BENCH_BIG=1).
func BenchmarkWatchRead1M(b *testing.B) { benchWatchRead(b, benchtest.BigBenchCount(b)) }

func benchWatchRead(b *testing.B, big int) {
	lots := benchLots(b, big)
	q := benchtest.DescribeBenchQueue(b, lots[0])
	w := watch.New(watch.Options{Queues: lots, NoDiscover: true, TopGroups: -1,
		Open: func(context.Context, string) (*replay.Session, error) { return benchSession(b), nil }})
	ctx := context.Background()
	w.Refresh(ctx) // connect and learn the queues outside the timed rounds
	raw := newRawReader(b)
	rounds := benchtest.BenchRounds(b)
	var used []float64
	var client, brokerCPU time.Duration // the watch's side only
	r := benchtest.Alternate(b, rounds, func(int) float64 {
		c0, k0 := benchtest.CPUTime()
		b.StartTimer()
		t0 := time.Now()
		w.Refresh(ctx)
		d := time.Since(t0)
		b.StopTimer()
		c1, k1 := benchtest.CPUTime()
		client += c1 - c0
		if k0 >= 0 && k1 >= 0 && brokerCPU >= 0 {
			brokerCPU += k1 - k0
		} else {
			brokerCPU = -1
		}
		used = append(used, float64(d.Milliseconds()))
		return 1 / d.Seconds()
	}, func(int) float64 {
		t0 := time.Now()
		for _, l := range lots {
			raw.read(l, q.Type == "classic")
		}
		return 1 / time.Since(t0).Seconds()
	})
	for _, s := range w.Snapshots() {
		if s.Err != "" || !s.Found {
			b.Fatalf("%s: %q", s.Queue, s.Err)
		}
	}
	name := q.Name("watch-read-10-lots-" + benchtest.CountLabel(big))
	benchtest.BenchLine(b, name+"-vs-raw-reads", 10, r, "reads/s")
	benchtest.BenchLine(b, name+"-vs-1s-budget", 10, benchtest.Budget(used, 1000), "ms")
	reads := float64(rounds * len(lots))
	if brokerCPU >= 0 {
		// Each lot is read 4 times a minute at the default 15 s interval.
		perRead := float64(brokerCPU) / float64(time.Millisecond) / reads
		benchtest.BenchNote("broker CPU per parking lot: %.2f ms a read, %.1f ms a minute at the default interval; the watch's own CPU %.2f ms a read",
			perRead, 4*perRead, float64(client)/float64(time.Millisecond)/reads)
	} else {
		benchtest.BenchNote("broker CPU not measured: PARKINGLOT_BENCH_BROKER_PID names no process of this machine")
	}
}

// BenchmarkWatchScan: a group scan of the big parking lot (the watch's
// browse pass, counting groups) against the browse pass `list` makes of
// the same messages (the target: a scan costs what a browse pass costs)
// and against a raw hold-unacked consume (benchtest.RawHoldBrowse), all
// timed until every message is ready again. With the broker's pid it
// notes the broker's CPU a scan costs, and what that is a minute at the
// default scan intervals.
func BenchmarkWatchScan(b *testing.B) {
	n := benchtest.BenchCount(b, 100_000)
	lot := benchtest.BenchParkingLot(b, "scan.dlq", n)
	q := benchtest.DescribeBenchQueue(b, lot)
	w := watch.New(watch.Options{Queues: []string{lot}, NoDiscover: true, ScanInterval: time.Hour, TopGroups: 10,
		Open: func(context.Context, string) (*replay.Session, error) { return benchSession(b), nil }})
	ctx := context.Background()
	w.Refresh(ctx)
	list := benchSession(b)
	rounds := benchtest.BenchRounds(b)
	var brokerCPU time.Duration // the scans' side only
	rs := benchtest.AlternateAll(b, rounds, func(int) float64 {
		_, k0 := benchtest.CPUTime()
		b.StartTimer()
		t0 := time.Now()
		w.Scan(ctx, "", lot)
		d := time.Since(t0)
		b.StopTimer()
		_, k1 := benchtest.CPUTime()
		if k0 >= 0 && k1 >= 0 && brokerCPU >= 0 {
			brokerCPU += k1 - k0
		} else {
			brokerCPU = -1
		}
		brokertest.WaitDepth(b, lot, n, benchtest.GiveBackWithin(n))
		return float64(n) / d.Seconds()
	}, func(int) float64 {
		// list's pass: every message read and decoded, given back at
		// once, then ready again.
		t0 := time.Now()
		seen := 0
		if _, err := list.Browse(ctx, replay.BrowseOptions{Queue: lot, StreamOnly: true,
			OnBatch: func(batch []replay.Summary) { seen += len(batch) }}); err != nil {
			b.Fatal(err)
		}
		list.AwaitReady(ctx, lot, seen, time.Minute)
		d := time.Since(t0)
		if seen != n {
			b.Fatalf("the browse pass saw %d of %d messages", seen, n)
		}
		brokertest.WaitDepth(b, lot, n, benchtest.GiveBackWithin(n))
		return float64(n) / d.Seconds()
	}, func(int) float64 {
		// Timed until every message is ready again, as the scan is: it
		// waits for its give-back before the next head read.
		t0 := time.Now()
		benchtest.RawHoldBrowse(b, lot, n)
		brokertest.WaitDepth(b, lot, n, benchtest.GiveBackWithin(n))
		return float64(n) / time.Since(t0).Seconds()
	})
	if s := w.Snapshots()[0]; s.Scanned != int64(n) {
		b.Fatalf("the scan saw %d of %d messages", s.Scanned, n)
	}
	name := q.Name("watch-scan-" + benchtest.CountLabel(n))
	benchtest.BenchLine(b, name+"-vs-browse-pass", n, rs[0], "")
	benchtest.BenchLine(b, name+"-vs-raw-hold", n, rs[1], "")
	if brokerCPU >= 0 {
		perScan := float64(brokerCPU) / float64(time.Millisecond) / float64(rounds)
		every := watch.DefaultScanInterval
		if n > watch.DefaultBigQueue {
			every *= watch.DefaultBigScanEvery
		}
		benchtest.BenchNote("broker CPU of a group scan of %s: %.0f ms (%.1f µs a message); scanned every %s by default, %.1f ms a minute",
			benchtest.CountLabel(n), perScan, perScan*1000/float64(n), every, perScan/every.Minutes())
	} else {
		benchtest.BenchNote("broker CPU not measured: PARKINGLOT_BENCH_BROKER_PID names no process of this machine")
	}
}

// rawReader is the baseline's reads: the management API's queue object
// over net/http, and a basic.get given back on one amqp091-go channel.
type rawReader struct {
	b    *testing.B
	mgmt string
	http *http.Client
	ch   *amqp.Channel
}

func newRawReader(b *testing.B) *rawReader {
	return &rawReader{b: b, mgmt: brokertest.ManagementURL(), http: &http.Client{Timeout: 30 * time.Second}, ch: brokertest.Channel(b)}
}

func (r *rawReader) read(queue string, head bool) {
	u, err := url.Parse(r.mgmt + "/api/queues/%2F/" + url.PathEscape(queue))
	if err != nil {
		r.b.Fatal(err)
	}
	resp, err := r.http.Get(u.String())
	if err != nil {
		r.b.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		r.b.Fatalf("GET %s: %d", queue, resp.StatusCode)
	}
	if !head {
		return
	}
	d, ok, err := r.ch.Get(queue, false)
	if err != nil || !ok {
		r.b.Fatalf("get %s: %v %v", queue, ok, err)
	}
	if err := d.Nack(false, true); err != nil {
		r.b.Fatal(err)
	}
}
