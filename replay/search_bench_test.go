//go:build integration

package replay_test

import (
	"context"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker/body"
	"github.com/parkinglot/parkinglot/broker/brokertest"
	"github.com/parkinglot/parkinglot/broker/brokertest/benchtest"
	"github.com/parkinglot/parkinglot/replay"
)

// BenchmarkSearch: a search of a parking lot of PARKINGLOT_BENCH_N
// messages (default 100,000), every message a match (the most a search can
// have to keep), against a raw hold-unacked consume of the same messages
// (benchtest.RawHoldBrowse), both timed until every message is ready
// again. Beside the rate: the time to the first match (the first message
// matches; budget 200 ms), and the heap the search grew by: it keeps
// DefaultSearchKeep matches and counts the rest, so it must not grow with
// the parking lot.
func BenchmarkSearch(b *testing.B) { benchSearch(b, benchtest.BenchCount(b, 100_000)) }

// BenchmarkSearch1M is BenchmarkSearch on 1,000,000 messages
// (PARKINGLOT_BENCH_BIG=1).
func BenchmarkSearch1M(b *testing.B) { benchSearch(b, benchtest.BigBenchCount(b)) }

func benchSearch(b *testing.B, n int) {
	lot := benchtest.BenchParkingLot(b, "search.dlq", n)
	q := benchtest.DescribeBenchQueue(b, lot)
	s, _ := openSession(b, replay.Config{})
	ctx := context.Background()
	settle := benchtest.GiveBackWithin(n)
	var grew, first []float64 // MB of heap over the search's start at its peak; ms to the first match
	r := benchtest.Alternate(b, benchtest.BenchRounds(b), func(int) float64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		base := ms.HeapAlloc
		peak := sampleHeap()
		var firstAt time.Duration
		b.StartTimer()
		t0 := time.Now()
		res, err := s.Search(ctx, replay.SearchOptions{Queues: []string{lot}, Query: replay.ParseQuery("true"),
			OnMatch: func(string, replay.Summary) {
				if firstAt == 0 {
					firstAt = time.Since(t0)
				}
			}})
		brokertest.WaitDepth(b, lot, n, settle)
		d := time.Since(t0)
		b.StopTimer()
		top := peak()
		if err != nil {
			b.Fatal(err)
		}
		if res.Matched != n || len(res.Matches) != min(n, replay.DefaultSearchKeep) {
			b.Fatalf("the search matched %d (kept %d), want %d", res.Matched, len(res.Matches), n)
		}
		grew = append(grew, float64(max(top, base)-base)/(1<<20))
		first = append(first, float64(firstAt)/float64(time.Millisecond))
		return benchtest.Rate(n, d)
	}, func(int) float64 {
		t0 := time.Now()
		benchtest.RawHoldBrowse(b, lot, n)
		brokertest.WaitDepth(b, lot, n, settle)
		return benchtest.Rate(n, time.Since(t0))
	})
	name := q.Name("search-" + benchtest.CountLabel(n))
	benchtest.BenchLine(b, name+"-vs-raw-hold", n, r, "")
	benchtest.BenchLine(b, name+"-first-match-vs-200ms-budget", n, benchtest.Budget(first, 200), "ms")
	benchtest.BenchNote("the search's heap grew by %.1f MB at its peak (median of %d; %d matches kept, the rest counted)",
		benchtest.Median(grew), len(grew), replay.DefaultSearchKeep)
}

// sampleHeap samples the heap in use every 20 ms until the returned
// function is called, which gives the highest sample.
func sampleHeap() (stop func() uint64) {
	var (
		mu   sync.Mutex
		peak uint64
		done = make(chan struct{})
		wg   sync.WaitGroup
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		for {
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			mu.Lock()
			peak = max(peak, ms.HeapAlloc)
			mu.Unlock()
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() uint64 {
		close(done)
		wg.Wait()
		return peak
	}
}

// BenchmarkSearchDecoded: a plain-text search ("4711") of a parking lot of
// PARKINGLOT_BENCH_N protobuf messages (default 100,000; the body pika
// published in testdata/frameworks/pika-protobuf.json), each body decoded
// with the schema (the search matches its JSON), against the same search
// of a session without the schema (the raw bytes matched), alternated.
// Beside it: the time to the first match with decoding, the first page's,
// against the 200 ms budget.
func BenchmarkSearchDecoded(b *testing.B) {
	n := benchtest.BenchCount(b, 100_000)
	rec := brokertest.Recording(b, "pika-protobuf")
	lot := brokertest.Name(b, "search-protobuf.dlq")
	brokertest.DeclareQueue(b, brokertest.Channel(b), lot, benchtest.BenchQueueArgs(b, true))
	benchtest.ConfirmedPublish(b, "", lot, n, benchtest.BenchWindow, func(i int) amqp.Publishing {
		p := benchtest.Parked(i, benchtest.ParkedOrigin{})
		p.ContentType, p.Body = rec.Properties.ContentType, rec.Body
		return p
	})
	brokertest.WaitDepth(b, lot, n, 5*time.Minute)
	q := benchtest.DescribeBenchQueue(b, lot)
	root, err := brokertest.ModuleRoot()
	if err != nil {
		b.Fatal(err)
	}
	schemas := filepath.Join(root, "testdata", "frameworks", "schemas")
	ctx := context.Background()
	reader, err := replay.BodyReader(ctx, replay.Decode{ProtoPath: []string{schemas}, Proto: []string{filepath.Join(schemas, "shop.proto")}}, replay.DecodeFlags{})
	if err != nil {
		b.Fatal(err)
	}
	s, _ := openSession(b, replay.Config{})
	settle := benchtest.GiveBackWithin(n)
	var first []float64 // ms to the first match, decoding
	search := func(bodies *body.Reader) float64 {
		s.Bodies = bodies
		var firstAt time.Duration
		b.StartTimer()
		t0 := time.Now()
		res, err := s.Search(ctx, replay.SearchOptions{Queues: []string{lot}, Query: replay.TextQuery("4711"),
			OnMatch: func(string, replay.Summary) {
				if firstAt == 0 {
					firstAt = time.Since(t0)
				}
			}})
		brokertest.WaitDepth(b, lot, n, settle)
		d := time.Since(t0)
		b.StopTimer()
		if err != nil || res.Matched != n {
			b.Fatalf("the search matched %d of %d: %v", res.Matched, n, err)
		}
		if bodies != nil {
			first = append(first, float64(firstAt)/float64(time.Millisecond))
		}
		return benchtest.Rate(n, d)
	}
	r := benchtest.Alternate(b, benchtest.BenchRounds(b), func(int) float64 { return search(reader) }, func(int) float64 { return search(nil) })
	name := q.Name("search-protobuf-" + benchtest.CountLabel(n))
	benchtest.BenchLine(b, name+"-decoded-vs-raw-bytes", n, r, "")
	benchtest.BenchLine(b, name+"-decoded-first-match-vs-200ms-budget", n, benchtest.Budget(first, 200), "ms")
}
