//go:build integration

package cli_test

import (
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/parkinglot/parkinglot/broker/brokertest"
	"github.com/parkinglot/parkinglot/broker/brokertest/benchtest"
)

// BenchmarkTUIBrowse opens `parkinglot tui QUEUE` on a 100,000-message
// parking lot in a pseudo-terminal, as a person does, alternated round by
// round with the raw hold-unacked consume of the same queue (brokertest,
// "Benchmark method"): the time from launch to the first screen of rows, to
// the whole list loaded and every message given back ("all given back" on
// screen), a sort and a group keystroke over every row until the screen
// shows it, and the process's peak RSS (the kernel's ru_maxrss). Budgets:
// first screen 200 ms, a keystroke 1 s, peak RSS 300 MB; the scan's target
// is ≥ 0.9 of the raw hold.
func BenchmarkTUIBrowse(b *testing.B) {
	benchTUIBrowse(b, benchtest.BenchCount(b, 100_000), "")
}

// BenchmarkTUIBrowseBig is BenchmarkTUIBrowse on the 1,000,000-message
// parking lot of the 1M lines (PARKINGLOT_BENCH_BIG=1; see
// benchtest.BigBenchCount).
func BenchmarkTUIBrowseBig(b *testing.B) {
	n := benchtest.BigBenchCount(b)
	benchTUIBrowse(b, n, benchtest.CountLabel(n)+"-")
}

func benchTUIBrowse(b *testing.B, n int, label string) {
	rounds := benchtest.BenchRounds(b)
	ch := brokertest.Channel(b)
	queue := brokertest.Name(b, "tui.dlq")
	brokertest.DeclareQueue(b, ch, queue, benchtest.BenchQueueArgs(b, true))
	b.Cleanup(func() { _, _ = ch.QueueDelete(queue, false, false, false) })
	benchtest.SeedParked(b, queue, n, benchtest.ParkedOrigin{Exchange: "payments", RoutingKey: "payment.execute", Queue: "payments"})
	settle := benchtest.GiveBackWithin(n)
	loadWithin := 10*time.Minute + time.Duration(n/1000)*time.Second
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	for iter := 0; iter < b.N; iter++ {
		b.StopTimer()
		var first, sorts, groups, rss []float64
		tuiRun := func(int) float64 {
			start := time.Now()
			tm := startTerminal(b, []string{"NO_COLOR=1"}, "tui", queue)
			pos := tm.waitAfter(0, benchtest.ParkedID(0), time.Minute) // the first row
			first = append(first, ms(time.Since(start)))
			pos = tm.waitAfter(pos, "all given back", loadWithin)
			scan := time.Since(start)
			at := time.Now()
			tm.send("s")
			pos = tm.waitAfter(pos, "sort: age", time.Minute)
			sorts = append(sorts, ms(time.Since(at)))
			at = time.Now()
			tm.send("g")
			pos = tm.waitAfter(pos, fmt.Sprintf("groups of %d messages", n), time.Minute)
			groups = append(groups, ms(time.Since(at)))
			tm.send("q")
			if code, _ := tm.exit(); code != 0 {
				b.Fatalf("tui exited %d", code)
			}
			if ru, ok := tm.cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
				rss = append(rss, float64(ru.Maxrss)/1024) // KiB on Linux
			}
			// Each round's figures as it ends: a long run that fails later
			// still leaves them.
			fmt.Printf("tui round %d: first screen %.0f ms, load %s (%.0f msg/s), sort %.1f ms, group %.1f ms, peak RSS %.1f MB\n",
				len(first), last(first), scan.Round(time.Millisecond), benchtest.Rate(n, scan), last(sorts), last(groups), last(rss))
			brokertest.WaitDepth(b, queue, n, settle)
			return benchtest.Rate(n, scan)
		}
		rawRun := func(int) float64 {
			_, total := benchtest.RawHoldBrowse(b, queue, n)
			brokertest.WaitDepth(b, queue, n, settle)
			return benchtest.Rate(n, total)
		}
		r := benchtest.Alternate(b, rounds, tuiRun, rawRun)
		benchtest.BenchLine(b, "tui-"+label+"load-vs-raw-hold", n, r, "")
		benchtest.BenchLine(b, "tui-"+label+"first-screen-vs-200ms-budget", n, benchtest.Budget(first, 200), "ms")
		benchtest.BenchLine(b, "tui-"+label+"sort-keystroke-vs-1s-budget(terminal)", n, benchtest.Budget(sorts, 1000), "ms")
		benchtest.BenchLine(b, "tui-"+label+"group-keystroke-vs-1s-budget(terminal)", n, benchtest.Budget(groups, 1000), "ms")
		benchtest.BenchLine(b, "tui-"+label+"peak-rss-vs-300MB-budget", n, benchtest.Budget(rss, 300), "MB")
		benchtest.BenchNote("tui %s in a terminal: load %s msg/s (raw hold %s), first screen %s ms, sort %s ms, group %s ms, peak RSS %s MB",
			benchtest.CountLabel(n), benchtest.RoundFigures(r.Measured), benchtest.RoundFigures(r.Baseline),
			benchtest.RoundFigures(first), benchtest.RoundFigures(sorts), benchtest.RoundFigures(groups), benchtest.RoundFigures(rss))
	}
}

// last is the newest figure (0 before the first).
func last(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	return xs[len(xs)-1]
}
