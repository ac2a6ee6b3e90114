//go:build integration

package cli_test

import (
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/parkinglot/parkinglot/broker/brokertest"
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
	benchTUIBrowse(b, brokertest.BenchCount(b, 100_000), "")
}

// BenchmarkTUIBrowseBig is BenchmarkTUIBrowse on the 1,000,000-message
// parking lot of the 1M lines (PARKINGLOT_BENCH_BIG=1; see
// brokertest.BigBenchCount).
func BenchmarkTUIBrowseBig(b *testing.B) {
	n := brokertest.BigBenchCount(b)
	benchTUIBrowse(b, n, brokertest.CountLabel(n)+"-")
}

func benchTUIBrowse(b *testing.B, n int, label string) {
	rounds := brokertest.BenchRounds(b)
	ch := brokertest.Channel(b)
	queue := brokertest.Name(b, "tui.dlq")
	brokertest.DeclareQueue(b, ch, queue, brokertest.BenchQueueArgs(b, true))
	b.Cleanup(func() { _, _ = ch.QueueDelete(queue, false, false, false) })
	brokertest.SeedParked(b, queue, n, brokertest.ParkedOrigin{Exchange: "payments", RoutingKey: "payment.execute", Queue: "payments"})
	settle := brokertest.GiveBackWithin(n)
	loadWithin := 10*time.Minute + time.Duration(n/1000)*time.Second
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	for iter := 0; iter < b.N; iter++ {
		b.StopTimer()
		var first, sorts, groups, rss []float64
		tuiRun := func(int) float64 {
			start := time.Now()
			tm := startTerminal(b, []string{"NO_COLOR=1"}, "tui", queue)
			pos := tm.waitAfter(0, brokertest.ParkedID(0), time.Minute) // the first row
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
				len(first), last(first), scan.Round(time.Millisecond), brokertest.Rate(n, scan), last(sorts), last(groups), last(rss))
			brokertest.WaitDepth(b, queue, n, settle)
			return brokertest.Rate(n, scan)
		}
		rawRun := func(int) float64 {
			_, total := brokertest.RawHoldBrowse(b, queue, n)
			brokertest.WaitDepth(b, queue, n, settle)
			return brokertest.Rate(n, total)
		}
		r := brokertest.Alternate(b, rounds, tuiRun, rawRun)
		brokertest.BenchLine(b, "tui-"+label+"load-vs-raw-hold", n, r, "")
		brokertest.BenchLine(b, "tui-"+label+"first-screen-vs-200ms-budget", n, brokertest.Budget(first, 200), "ms")
		brokertest.BenchLine(b, "tui-"+label+"sort-keystroke-vs-1s-budget(terminal)", n, brokertest.Budget(sorts, 1000), "ms")
		brokertest.BenchLine(b, "tui-"+label+"group-keystroke-vs-1s-budget(terminal)", n, brokertest.Budget(groups, 1000), "ms")
		brokertest.BenchLine(b, "tui-"+label+"peak-rss-vs-300MB-budget", n, brokertest.Budget(rss, 300), "MB")
		brokertest.BenchNote("tui %s in a terminal: load %s msg/s (raw hold %s), first screen %s ms, sort %s ms, group %s ms, peak RSS %s MB",
			brokertest.CountLabel(n), brokertest.RoundFigures(r.Measured), brokertest.RoundFigures(r.Baseline),
			brokertest.RoundFigures(first), brokertest.RoundFigures(sorts), brokertest.RoundFigures(groups), brokertest.RoundFigures(rss))
	}
}

// last is the newest figure (0 before the first).
func last(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	return xs[len(xs)-1]
}
