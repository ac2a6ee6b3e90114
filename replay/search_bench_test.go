//go:build integration

package replay_test

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/parkinglot/parkinglot/broker/brokertest"
	"github.com/parkinglot/parkinglot/replay"
)

// BenchmarkSearch: a search over ten parking lots holding
// PARKINGLOT_BENCH_N messages in all (default 100,000), every message a
// match (the most a search can have to keep), against a raw hold-unacked
// consume of the same lots (brokertest.RawHoldBrowse), both timed until
// every message is ready again. Beside the rate, the heap the search grew
// by: it keeps DefaultSearchKeep matches and counts the rest, so it must
// not grow with the lots.
func BenchmarkSearch(b *testing.B) { benchSearch(b, brokertest.BenchCount(b, 100_000)) }

// BenchmarkSearch1M is BenchmarkSearch with 1,000,000 messages in all
// (PARKINGLOT_BENCH_BIG=1).
func BenchmarkSearch1M(b *testing.B) { benchSearch(b, brokertest.BigBenchCount(b)) }

func benchSearch(b *testing.B, total int) {
	ch := brokertest.Channel(b)
	args := brokertest.BenchQueueArgs(b, true)
	lots := make([]string, 10)
	per := total / len(lots)
	for i := range lots {
		lots[i] = brokertest.Name(b, fmt.Sprintf("search%d.dlq", i))
		brokertest.DeclareQueue(b, ch, lots[i], args)
		brokertest.SeedParked(b, lots[i], per, brokertest.ParkedOrigin{})
		brokertest.WaitDepth(b, lots[i], per, 5*time.Minute)
	}
	n := per * len(lots)
	q := brokertest.DescribeBenchQueue(b, lots[0])
	s, _ := openSession(b, replay.Config{})
	ctx := context.Background()
	settle := brokertest.GiveBackWithin(per)
	ready := func() {
		for _, l := range lots {
			brokertest.WaitDepth(b, l, per, settle)
		}
	}
	var grew []float64 // MB of heap over the search's start, at its peak
	r := brokertest.Alternate(b, brokertest.BenchRounds(b), func(int) float64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		base := ms.HeapAlloc
		peak := sampleHeap()
		b.StartTimer()
		t0 := time.Now()
		res, err := s.Search(ctx, replay.SearchOptions{Queues: lots, Query: replay.ParseQuery("true")})
		ready()
		d := time.Since(t0)
		b.StopTimer()
		top := peak()
		if err != nil {
			b.Fatal(err)
		}
		if res.Matched != n || len(res.Matches) != replay.DefaultSearchKeep {
			b.Fatalf("the search matched %d (kept %d), want %d (kept %d)", res.Matched, len(res.Matches), n, replay.DefaultSearchKeep)
		}
		grew = append(grew, float64(max(top, base)-base)/(1<<20))
		return brokertest.Rate(n, d)
	}, func(int) float64 {
		t0 := time.Now()
		for _, l := range lots {
			brokertest.RawHoldBrowse(b, l, per)
		}
		ready()
		return brokertest.Rate(n, time.Since(t0))
	})
	name := q.Name("search-10-lots-" + brokertest.CountLabel(n))
	brokertest.BenchLine(b, name+"-vs-raw-hold", n, r, "")
	brokertest.BenchNote("the search's heap grew by %.1f MB at its peak (median of %d; %d matches kept, the rest counted)",
		brokertest.Median(grew), len(grew), replay.DefaultSearchKeep)
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
