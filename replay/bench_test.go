//go:build integration

package replay_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker/brokertest"
	"github.com/parkinglot/parkinglot/broker/brokertest/benchtest"
	"github.com/parkinglot/parkinglot/broker/store"
	"github.com/parkinglot/parkinglot/replay"
)

// The benchmarks (brokertest, "Benchmark method") that act on parking lots: replay and browse,
// each against its raw amqp091-go (or shovel plugin) baseline measured in
// the same run. Run them with `make bench`.

const (
	// naiveCount is how many messages the naive get → publish → confirm →
	// ack loop moves: at ~300 msg/s, 100k would take five minutes, and
	// its rate does not depend on the count.
	naiveCount = 2000
)

// benchTopology is a parking lot and the origin its messages came from: a
// direct exchange bound to one queue.
type benchTopology struct {
	parking, originEx, originKey, originQ string
	// returned, when set (quorum queues), is told how many messages came
	// back to the parking lot after each move (see checkMoved).
	returned func(what string, n int)
}

func declareBenchTopology(b *testing.B, ch *amqp.Channel) benchTopology {
	b.Helper()
	t := benchTopology{
		parking:   brokertest.Name(b, "dlq"),
		originEx:  brokertest.Name(b, "main.exchange"),
		originKey: "payment.execute",
		originQ:   brokertest.Name(b, "main.queue"),
	}
	brokertest.DeclareExchange(b, ch, t.originEx, "direct")
	// Classic queues, or quorum ones with $PARKINGLOT_BENCH_QUEUE_TYPE
	// (make bench-cluster).
	brokertest.DeclareQueue(b, ch, t.originQ, benchtest.BenchQueueArgs(b, false))
	brokertest.DeclareQueue(b, ch, t.parking, benchtest.BenchQueueArgs(b, true))
	bind(b, ch, t.originQ, t.originEx, t.originKey)
	return t
}

func (t benchTopology) seed(b *testing.B, queue string, n int) {
	b.Helper()
	benchtest.SeedParked(b, queue, n, benchtest.ParkedOrigin{Exchange: t.originEx, RoutingKey: t.originKey, Queue: t.originQ})
}

// BenchmarkReplay replays a 100,000-message parking lot to its origin with
// Session.Replay, every guarantee kept (mandatory, confirm before ack,
// audit entry fsynced before ack), against three baselines, alternated
// with it round by round (brokertest, "Benchmark method"): the raw pipelined
// amqp091-go move (target ≥ 0.95), the shovel plugin's move (what the
// management UI's "Move messages" does; no mandatory, no audit; target
// ≥ 0.95, which on 4.x not even the raw move reaches: benchtest's doc),
// and the naive get → publish → confirm → ack loop (information).
// A move empties its parking lot, so every round seeds again, outside the
// timed part.
func BenchmarkReplay(b *testing.B) {
	n := benchtest.BenchCount(b, 100_000)
	rounds := benchtest.BenchRounds(b)
	ch := brokertest.Channel(b)
	for iter := 0; iter < b.N; iter++ {
		b.StopTimer()
		t := declareBenchTopology(b, ch)
		moved := brokertest.Name(b, "moved")
		brokertest.DeclareQueue(b, ch, moved, benchtest.BenchQueueArgs(b, false))
		queues := benchtest.DescribeBenchQueue(b, t.parking)
		// returned[i] are the messages back in the parking lot after move i
		// of a round closed its channels (quorum only; see checkMoved).
		returned := map[string][]int{}
		t.returned = func(what string, k int) { returned[what] = append(returned[what], k) }
		if queues.Type != "quorum" {
			t.returned = nil
		}

		// CPU µs a message of each move, client and broker side (see
		// benchtest.CPUTime), as information.
		var cpu [3]struct{ client, broker []float64 }
		costed := func(which int, move func()) {
			c0, b0 := benchtest.CPUTime()
			move()
			c1, b1 := benchtest.CPUTime()
			c, br := benchtest.CPUPerMessage(c0, b0, c1, b1, n)
			cpu[which].client = append(cpu[which].client, c)
			cpu[which].broker = append(cpu[which].broker, br)
		}
		replayRun := func(int) float64 {
			t.seed(b, t.parking, n)
			s, _ := openSession(b, replay.Config{})
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
			defer cancel()
			b.StartTimer()
			start := time.Now()
			var res replay.Result
			var err error
			costed(0, func() { res, err = s.Replay(ctx, replay.Options{Queue: t.parking, Select: replay.Selector{All: true}}) })
			took := time.Since(start)
			b.StopTimer()
			if err != nil {
				b.Fatalf("replay: %v", err)
			}
			if res.Done != n || res.Failed != 0 {
				b.Fatalf("replay: %d done, %d failed (%v), want %d done", res.Done, res.Failed, res.Failures[:min(len(res.Failures), 3)], n)
			}
			_ = s.Close()
			t.checkMoved(b, ch, "replay", t.originQ, n)
			return benchtest.Rate(n, took)
		}
		rawRun := func(int) float64 {
			t.seed(b, t.parking, n)
			var d time.Duration
			costed(1, func() {
				d = benchtest.RawPipelinedMove(b, t.parking, t.originEx, t.originKey, n, rawMovePrefetch, replay.DefaultWindow)
			})
			t.checkMoved(b, ch, "raw move", t.originQ, n)
			return benchtest.Rate(n, d)
		}
		shovelRun := func(int) float64 {
			t.seed(b, t.parking, n)
			var d time.Duration
			costed(2, func() { d = benchtest.ShovelMove(b, t.parking, moved, n) })
			t.checkMoved(b, ch, "shovel move", moved, n)
			return benchtest.Rate(n, d)
		}
		// The naive loop moves a smaller count (see naiveCount).
		nn := min(naiveCount, n)
		naiveRun := func(int) float64 {
			t.seed(b, t.parking, nn)
			d := benchtest.NaiveMove(b, t.parking, t.originEx, t.originKey, nn)
			t.checkMoved(b, ch, "naive move", t.originQ, nn)
			return benchtest.Rate(nn, d)
		}
		r := benchtest.AlternateAll(b, rounds, replayRun, rawRun, shovelRun, naiveRun)
		benchtest.BenchLine(b, queues.Name("replay-vs-raw-pipelined-move", fmt.Sprintf("window %d", replay.DefaultWindow), fmt.Sprintf("prefetch %d", rawMovePrefetch)), n, r[0], "")
		benchtest.BenchLine(b, queues.Name("replay-vs-shovel"), n, r[1], "")
		benchtest.BenchLine(b, queues.Name("replay-vs-naive", fmt.Sprint(nn)), n, r[2], "")
		queues.Note("replay: the parking lot, its origin and the shovel's destination")
		if t.returned != nil {
			benchtest.BenchNote("replay: moved messages back in the parking lot after the move's channels closed (then purged): replay %v, raw move %v, shovel %v, naive %v",
				returned["replay"], returned["raw move"], returned["shovel move"], returned["naive move"])
		}
		benchtest.BenchNote("replay: replay %s msg/s; raw move %s; shovel %s; naive %s",
			benchtest.RoundFigures(r[0].Measured), benchtest.RoundFigures(r[0].Baseline),
			benchtest.RoundFigures(r[1].Baseline), benchtest.RoundFigures(r[2].Baseline))
		benchtest.BenchNote("replay: CPU µs a message, client: replay %s, raw move %s; broker ($PARKINGLOT_BENCH_BROKER_PID, -1: not set): replay %s, raw move %s, shovel %s",
			benchtest.RoundFigures(cpu[0].client), benchtest.RoundFigures(cpu[1].client),
			benchtest.RoundFigures(cpu[0].broker), benchtest.RoundFigures(cpu[1].broker), benchtest.RoundFigures(cpu[2].broker))
	}
}

// rawMovePrefetch is the raw pipelined move's prefetch: its window of
// unconfirmed copies (the replay's, replay.DefaultWindow) plus the 2,048
// deliveries a replay's pass lets the broker push ahead of what it holds.
const rawMovePrefetch = replay.DefaultWindow + 2048

// checkMoved waits until queue holds the n moved messages (and the
// parking lot none), then empties it for the next round.
func (t benchTopology) checkMoved(b *testing.B, ch *amqp.Channel, what, queue string, n int) {
	b.Helper()
	brokertest.WaitDepth(b, queue, n, time.Minute)
	if t.returned != nil {
		// On quorum queues, deliveries acked just before their channel
		// closed may come back (benchtest.Returned): counted, purged.
		t.returned(what, benchtest.Returned(b, ch, t.parking, time.Second))
	} else if d := brokertest.Depth(b, ch, t.parking); d != 0 {
		b.Fatalf("parking lot holds %d after the %s", d, what)
	}
	brokertest.Purge(b, ch, queue)
}

// browseChildEnv names the queue the browse child lists; its results go
// to the file named by browseOutEnv.
const (
	browseChildEnv = "PARKINGLOT_BENCH_BROWSE_QUEUE"
	browseOutEnv   = "PARKINGLOT_BENCH_BROWSE_OUT"
)

// browseFigures is what the browse child measured.
type browseFigures struct {
	Listed      int     `json:"listed"`
	Groups      int     `json:"groups"`
	FirstPageMS float64 `json:"first_page_ms"` // until 50 summaries were handed to OnBatch
	ScanMS      float64 `json:"scan_ms"`       // until Browse returned (every message given back)
	HWMKiB      int64   `json:"vm_hwm_kib"`    // VmHWM at the end
}

// TestBrowseChild is the browse benchmark's child process (it does
// nothing in a normal test run): it runs the browse engine as the TUI does
// (Session.Browse with a spool, summaries streamed through OnBatch and
// counted by error group) so its peak RSS is measured alone, without the
// benchmark's baseline and seeding in the same process. The TUI's own
// list (the compact index) is measured with the real binary in a terminal
// by ui/cli's BenchmarkTUIBrowse.
func TestBrowseChild(t *testing.T) {
	queue := os.Getenv(browseChildEnv)
	if queue == "" {
		t.Skip("only run by BenchmarkBrowse")
	}
	store.ApplyMemoryLimit() // as the TUI runs (the binary's openTUI)
	s, _ := openSession(t, replay.Config{})
	ctx := testCtx(t, 10*time.Minute)
	var fig browseFigures
	// The summaries arrive through OnBatch and are counted there
	// (StreamOnly: Browse keeps none).
	groups := map[string]int{}
	listed := 0
	start := time.Now()
	b, err := s.Browse(ctx, replay.BrowseOptions{Queue: queue, Spool: true, StreamOnly: true, OnBatch: func(batch []replay.Summary) {
		for _, sum := range batch {
			groups[sum.Group]++
		}
		listed += len(batch)
		if fig.FirstPageMS == 0 && listed >= 50 {
			fig.FirstPageMS = float64(time.Since(start).Microseconds()) / 1000
		}
	}})
	fig.ScanMS = float64(time.Since(start).Microseconds()) / 1000
	if err != nil {
		t.Fatalf("browse: %v", err)
	}
	defer b.Spool.Close()
	fig.Listed, fig.Groups = listed, len(groups)
	fig.HWMKiB = vmHWM(t)
	out, err := json.Marshal(fig)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(os.Getenv(browseOutEnv), out, 0o600); err != nil {
		t.Fatal(err)
	}
}

// vmHWM is this process's peak resident set size (VmHWM in
// /proc/self/status), in KiB.
func vmHWM(t testing.TB) int64 {
	t.Helper()
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			var kib int64
			if _, err := fmt.Sscan(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), &kib); err != nil {
				t.Fatalf("VmHWM %q: %v", rest, err)
			}
			return kib
		}
	}
	t.Fatal("no VmHWM in /proc/self/status")
	return 0
}

// BenchmarkBrowse lists a 100,000-message parking lot as the TUI does, in
// a child process (so its peak RSS is its own), alternated round by round
// with a raw hold-unacked consume of the same queue: time to the first page
// (50 rows), time to scan everything (summaries for group-by-error, bodies
// spooled, every message given back), and peak RSS. Targets: scan ≥ 0.9×
// raw, first page < 200 ms, RSS < 200 MB; the budget lines' ratio is used
// / budget (below 1.00 meets it).
func BenchmarkBrowse(b *testing.B) {
	benchBrowse(b, benchtest.BenchCount(b, 100_000), "", 200)
}

// BenchmarkBrowseBig is BenchmarkBrowse on the 1,000,000-message parking
// lot of the 1M lines (run with PARKINGLOT_BENCH_BIG=1; see
// benchtest.BigBenchCount for the count), with the budgets: first
// page < 200 ms, peak RSS < 300 MB, scan ≥ 0.9× the raw hold.
func BenchmarkBrowseBig(b *testing.B) {
	n := benchtest.BigBenchCount(b)
	benchBrowse(b, n, benchtest.CountLabel(n)+"-", 300)
}

// benchBrowse is BenchmarkBrowse on n messages; label goes into the
// figures lines' names ("" for the 100k lines, "1M-" for the big ones).
func benchBrowse(b *testing.B, n int, label string, rssBudgetMB float64) {
	rounds := benchtest.BenchRounds(b)
	ch := brokertest.Channel(b)
	t := declareBenchTopology(b, ch)
	t.seed(b, t.parking, n)
	settle := benchtest.GiveBackWithin(n)
	for iter := 0; iter < b.N; iter++ {
		b.StopTimer()
		var firstPage, rss, maxRSS, groups, rawScan []float64
		browseRun := func(int) float64 {
			out := filepath.Join(b.TempDir(), "browse.json")
			cmd := exec.Command(os.Args[0], "-test.run", "^TestBrowseChild$", "-test.bench", "^$", "-test.count", "1")
			cmd.Env = append(os.Environ(), browseChildEnv+"="+t.parking, browseOutEnv+"="+out)
			b.StartTimer()
			outText, err := cmd.CombinedOutput()
			b.StopTimer()
			if err != nil {
				b.Fatalf("browse child: %v\n%s", err, outText)
			}
			data, err := os.ReadFile(out)
			if err != nil {
				b.Fatalf("browse child wrote no figures: %v\n%s", err, outText)
			}
			var fig browseFigures
			if err := json.Unmarshal(data, &fig); err != nil {
				b.Fatal(err)
			}
			if fig.Listed != n {
				b.Fatalf("browse listed %d of %d", fig.Listed, n)
			}
			// The kernel's figure for the child (ru_maxrss, KiB on Linux),
			// as a cross-check of what it read itself.
			if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
				maxRSS = append(maxRSS, float64(ru.Maxrss)/1024)
			}
			firstPage = append(firstPage, fig.FirstPageMS)
			rss = append(rss, float64(fig.HWMKiB)/1024)
			groups = append(groups, float64(fig.Groups))
			brokertest.WaitDepth(b, t.parking, n, settle)
			return benchtest.Rate(n, time.Duration(fig.ScanMS*float64(time.Millisecond)))
		}
		rawRun := func(int) float64 {
			scan, total := benchtest.RawHoldBrowse(b, t.parking, n)
			brokertest.WaitDepth(b, t.parking, n, settle)
			rawScan = append(rawScan, benchtest.Rate(n, scan))
			return benchtest.Rate(n, total)
		}
		r := benchtest.Alternate(b, rounds, browseRun, rawRun)
		benchtest.BenchLine(b, "browse-"+label+"scan-vs-raw-hold", n, r, "")
		benchtest.BenchLine(b, "browse-"+label+"first-page-vs-200ms-budget", 50, benchtest.Budget(firstPage, 200), "ms")
		benchtest.BenchLine(b, fmt.Sprintf("browse-%speak-rss-vs-%.0fMB-budget", label, rssBudgetMB), n, benchtest.Budget(rss, rssBudgetMB), "MB")
		benchtest.BenchNote("browse %s: scan %s msg/s; raw hold %s msg/s with the give-back, %s without; first page %s ms; VmHWM %s MB, ru_maxrss %s MB; %s error groups",
			benchtest.CountLabel(n), benchtest.RoundFigures(r.Measured), benchtest.RoundFigures(r.Baseline), benchtest.RoundFigures(rawScan),
			benchtest.RoundFigures(firstPage), benchtest.RoundFigures(rss), benchtest.RoundFigures(maxRSS), benchtest.RoundFigures(groups))
	}
}
