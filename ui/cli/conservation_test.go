//go:build integration

package cli_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/broker/brokertest"
	"github.com/parkinglot/parkinglot/broker/brokertest/clustertest"
	"github.com/parkinglot/parkinglot/retrycore"
	"github.com/parkinglot/parkinglot/retrycore/retrytest"
)

// The conservation tests run the real binary (`parkinglot daemon --exec
// ledger`) over a pipeline declared by `parkinglot topology declare`, inject
// faults (kill -9 of the daemon, connections force-closed through the
// management API, and in the chaos variant a broker restart), and then
// account for every message id: each must be in the handler's ledger (done)
// or in the parking lot. Duplicates (at least once) are counted and bounded.
//
// The handler (testdata/handlers/ledger) decides each message's fate from
// its id alone, so the test also checks that every message met the fate
// planned for it, with the attempt count carried on the message across
// every fault: a done line names the attempt it succeeded at.

// conservationSpec is one run.
type conservationSpec struct {
	queueType             string
	messages              int
	kills                 int // kill -9 of the daemon, each followed by a restart
	forcedCloses          int // both daemon connections closed through the management API
	brokerRestarts        int // rabbitmqctl stop_app / start_app
	alarms                int // a memory alarm (publishers blocked), then cleared
	prefetch, concurrency int
	timeout               time.Duration // the whole run

	// nodeStops stop, with stopNode, the cluster node the daemon consumes
	// from (cluster tests): stopNode is given the daemon's connection name
	// prefix and returns a func that starts the node again, which the run
	// calls once the daemon consumes again elsewhere.
	nodeStops int
	stopNode  func(t *testing.T, connPrefix string) (restart func())

	// daemons > 1 runs that many daemon processes on the one pipeline
	// (cluster tests); kills, forced closes, broker restarts and alarms hit
	// the first. Daemon i's command line starts with daemonArgs(i) (its
	// --url). Once all consume, respread names a daemon to restart (SIGTERM,
	// start again: nothing lost or repeated) until it answers false, e.g.
	// until they are on different nodes. With several daemons a node stop
	// is stopDaemonsNode: it stops a node, waits until the daemons that were
	// on it consume again elsewhere, and returns a func that starts the
	// node again.
	daemons         int
	daemonArgs      func(i int) []string
	respread        func(t *testing.T, ds []*daemonProc) (restart int, again bool)
	stopDaemonsNode func(t *testing.T, ds []*daemonProc) (restart func())
}

// TestConservationDaemonKill9 is the normal-suite variant: 2,000 messages on
// a classic pipeline, two kill -9s and one forced close, no broker restart.
// The chaos variant (10,000 messages, quorum, a broker restart) is
// TestChaosDaemonConservation in chaos_daemon_test.go.
func TestConservationDaemonKill9(t *testing.T) {
	runConservation(t, conservationSpec{
		queueType:    retrycore.QueueClassic,
		messages:     2000,
		kills:        2,
		forcedCloses: 1,
		// Slow enough that work is left when the management API has listed
		// the restarted daemon's connections (a few seconds).
		prefetch:    10,
		concurrency: 2,
		timeout:     2 * time.Minute,
	})
}

func runConservation(t *testing.T, spec conservationSpec) {
	start := time.Now()
	deadline := start.Add(spec.timeout)
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("PARKINGLOT_CHAOS_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	rng := rand.New(rand.NewPCG(seed, 0))
	t.Logf("fault schedule seed %d (set PARKINGLOT_CHAOS_SEED to repeat it)", seed)

	p := retrytest.Pipeline(t, spec.queueType, 200*time.Millisecond, 500*time.Millisecond)
	p.MaxRetries, p.Prefetch, p.Concurrency = 3, spec.prefetch, spec.concurrency
	// The handlers are held while a fault is being prepared (see below):
	// the hold must not run into the handler timeout.
	p.HandlerTimeout = retrycore.NewDelay(2 * time.Minute)
	file := writePipelineFile(t, p)
	c := newCLI(t)
	code, stdout, stderr := c.run("topology", "declare", "-f", file)
	if code != 0 || strings.Count(stdout, "created") != 11 {
		t.Fatalf("topology declare: exit %d\n%s%s", code, stdout, stderr)
	}

	handler := buildLedgerHandler(t)
	ledger := filepath.Join(t.TempDir(), "ledger.txt")
	ids := make([]string, spec.messages)
	for i := range ids {
		ids[i] = fmt.Sprintf("msg-%05d", i)
	}
	plan := ledgerPlan(t, handler, ids)

	// Publish everything (persistent, confirmed, mandatory) before the
	// daemon starts; the faults then land while the backlog is worked off.
	msgs := make([]amqp.Publishing, len(ids))
	for i, id := range ids {
		msgs[i] = amqp.Publishing{MessageId: id, DeliveryMode: amqp.Persistent, ContentType: "text/plain", Body: []byte("payment " + id)}
	}
	pubConn := brokertest.Dial(t, "")
	pubCh, err := pubConn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	brokertest.PublishMany(t, pubCh, p.Main.Exchange, p.Main.RoutingKey, msgs)
	_ = pubConn.Close() // a broker restart would break it anyway
	published := time.Since(start)

	hold := filepath.Join(t.TempDir(), "hold")
	daemonArgs := []string{"daemon", "-f", file, "--exec", handler, ledger, hold}
	argsOf := func(i int) []string {
		if spec.daemonArgs == nil {
			return daemonArgs
		}
		return append(spec.daemonArgs(i), daemonArgs...) // before "daemon": after --exec they are the handler's
	}
	ds := make([]*daemonProc, max(spec.daemons, 1))
	for i := range ds {
		ds[i] = startDaemon(t, c, argsOf(i)...)
	}
	for _, d := range ds {
		d.waitConsuming(t, 0, 60*time.Second)
	}
	for tries := 0; spec.respread != nil; tries++ {
		i, again := spec.respread(t, ds)
		if !again {
			break
		}
		if tries == 20 {
			t.Fatal("the daemons are not spread as the test wants after 20 restarts")
		}
		ds[i].stop(t)
		ds[i] = startDaemon(t, c, argsOf(i)...)
		ds[i].waitConsuming(t, 0, 60*time.Second)
	}
	d := ds[0]
	progress := &ledgerProgress{path: ledger}

	// A fault lands after a random amount of work (a random number of newly
	// done messages), or after a random time when work runs short. The
	// amount is capped so that each fault still leaves work for the next.
	faultsLeft := spec.kills + spec.forcedCloses + spec.brokerRestarts + spec.alarms + spec.nodeStops
	toDo := 0 // messages the handler will finish
	for _, pl := range plan {
		if pl.parkKind() == "" {
			toDo++
		}
	}
	randomPoint := func() {
		t.Helper()
		n := 20 + rng.IntN(300)
		if limit := (toDo - progress.lines(t)) / (faultsLeft + 1); n > limit {
			n = max(1, limit)
		}
		faultsLeft--
		progress.waitGrowth(t, n, time.Duration(300+rng.IntN(2000))*time.Millisecond)
	}
	kills, forced, restarts := 0, 0, 0
	// outstanding is how many ids were neither done nor parked just before
	// the last fault: the faults must land on work in progress.
	outstanding := 0
	beforeFault := func() {
		t.Helper()
		randomPoint()
		outstanding = len(ids) - progress.distinct(t) - depthOf(t, p.Error.Queue)
	}
	for range spec.kills {
		beforeFault()
		d.kill9(t)
		kills++
		d = startDaemon(t, c, daemonArgs...)
		d.waitConsuming(t, 0, 60*time.Second)
		ds[0] = d
	}
	prefix := "parkinglot daemon " + p.Name
	m := brokertest.Management(t)
	for range spec.forcedCloses {
		// The management API lists a new connection only after a few
		// seconds: wait for it first, so the close lands on work in progress.
		// The handlers are held meanwhile: the daemon could otherwise finish
		// everything before the close lands.
		holdHandlers(t, hold, true)
		brokertest.Eventually(t, 30*time.Second, 200*time.Millisecond, func() bool { return listed(t, m, prefix) },
			func() string { return "the management API never listed the daemon's connections" })
		holdHandlers(t, hold, false)
		beforeFault()
		from := d.log.len()
		brokertest.Eventually(t, 30*time.Second, 200*time.Millisecond, func() bool { return brokertest.CloseConnections(t, m, prefix) > 0 },
			func() string { return "could not close the daemon's connections" })
		forced++
		d.waitConsuming(t, from, 60*time.Second)
	}
	stops := 0
	for range spec.nodeStops {
		// As for a forced close: the node is found through the management
		// API's listing of the daemon's connections, with the handlers held.
		holdHandlers(t, hold, true)
		func() {
			defer holdHandlers(t, hold, false)
			brokertest.Eventually(t, 30*time.Second, 200*time.Millisecond, func() bool { return listed(t, m, prefix) },
				func() string { return "the management API never listed the daemon's connections" })
		}()
		beforeFault()
		if spec.stopDaemonsNode != nil {
			restart := spec.stopDaemonsNode(t, ds)
			stops++
			restart()
			continue
		}
		from := d.log.len()
		restart := spec.stopNode(t, prefix)
		stops++
		d.waitConsuming(t, from, 2*time.Minute)
		restart()
	}
	var away time.Duration
	for range spec.brokerRestarts {
		beforeFault()
		from := d.log.len()
		away += clustertest.RestartApp(t)
		restarts++
		d.waitConsuming(t, from, 2*time.Minute)
	}
	// A resource alarm blocks the daemon's publishing connection: retries
	// and parks wait (and give their message back if it lasts past the
	// publish timeout) while acks go on over the consuming connection.
	blockedDone := 0
	for range spec.alarms {
		beforeFault()
		// Hold the handlers while rabbitmqctl raises the alarm (a second or
		// more): without the hold the daemon could finish everything in
		// that time, publish nothing while blocked, and never be told.
		holdHandlers(t, hold, true)
		from := d.log.len()
		clearAlarm := clustertest.MemoryAlarm(t)
		holdHandlers(t, hold, false)
		d.waitLine(t, "broker blocked this connection (resource alarm)", from, 30*time.Second)
		before := progress.lines(t)
		progress.waitGrowth(t, 20, 5*time.Second)
		blockedDone += progress.lines(t) - before
		clearAlarm()
		d.waitLine(t, "broker unblocked this connection", from, 30*time.Second)
	}
	faultsDone := time.Since(start)

	// Drain: wait until the main queue and the delay tiers are empty and
	// every id is done or parked (by count), then stop the daemon with
	// SIGTERM (in-flight handlers finish, unstarted messages are given
	// back) and look again: a copy still in flight brings a message back
	// to the main queue, and the daemon is started again for it.
	ch := brokertest.Channel(t) // a fresh connection: the broker may have restarted
	work := append([]string{p.Main.Queue}, retrytest.TierQueues(p)...)
	for round := 1; ; round++ {
		var left, accounted int
		brokertest.Eventually(t, time.Until(deadline), 100*time.Millisecond, func() bool {
			left = 0
			for _, q := range work {
				left += brokertest.Depth(t, ch, q)
			}
			accounted = progress.distinct(t) + brokertest.Depth(t, ch, p.Error.Queue)
			return left == 0 && accounted >= len(ids)
		}, func() string {
			return fmt.Sprintf("not drained after %v: %d messages still in the main queue and delay tiers, %d of %d ids accounted for", spec.timeout, left, accounted, len(ids))
		})
		for _, d := range ds {
			d.stop(t)
		}
		ds = ds[:1]
		left = 0
		for _, q := range work {
			left += brokertest.Depth(t, ch, q)
		}
		if left == 0 {
			break
		}
		if round == 5 || time.Now().After(deadline) {
			t.Fatalf("%d messages still in the main queue and delay tiers after %d rounds", left, round)
		}
		d = startDaemon(t, c, daemonArgs...)
		d.waitConsuming(t, 0, 60*time.Second)
		ds[0] = d
	}

	// Account for every id.
	done, attempts := readLedger(t, ledger)
	parked := map[string]int{}
	kinds := map[string]string{}
	var misfiled []string
	for _, dl := range brokertest.Drain(t, ch, p.Error.Queue) {
		parked[dl.MessageId]++
		kind, _ := dl.Headers[retrycore.HeaderFailureKind].(string)
		if prev, ok := kinds[dl.MessageId]; ok && prev != kind {
			misfiled = append(misfiled, fmt.Sprintf("%s parked as %s and as %s", dl.MessageId, prev, kind))
		}
		kinds[dl.MessageId] = kind
		if want := plan[dl.MessageId]; want.parkKind() != "" {
			retries, _ := broker.IntValue(dl.Headers[retrycore.HeaderRetryCount])
			if wantRetries := map[string]int64{retrycore.KindPermanent: 0, retrycore.KindRetriesExhausted: 3}[want.parkKind()]; retries != wantRetries {
				misfiled = append(misfiled, fmt.Sprintf("%s parked with x-retry-count %d, want %d", dl.MessageId, retries, wantRetries))
			}
		}
	}
	missing, unknown := 0, 0
	var missingIDs []string
	dupDone, dupParked, doneAndParked := 0, 0, 0
	for _, id := range ids {
		n, pk := done[id], parked[id]
		switch {
		case n == 0 && pk == 0:
			missing++
			if len(missingIDs) < 20 {
				missingIDs = append(missingIDs, id)
			}
		case n > 0 && pk > 0:
			doneAndParked++
		}
		dupDone += max(n-1, 0)
		dupParked += max(pk-1, 0)
		want := plan[id]
		switch {
		case n > 0 && want.parkKind() != "":
			misfiled = append(misfiled, fmt.Sprintf("%s done, but planned %s", id, want.fate))
		case pk > 0 && want.parkKind() == "":
			misfiled = append(misfiled, fmt.Sprintf("%s parked (%s), but planned %s", id, kinds[id], want.fate))
		case pk > 0 && kinds[id] != want.parkKind():
			misfiled = append(misfiled, fmt.Sprintf("%s parked as %q, want %q", id, kinds[id], want.parkKind()))
		}
		for _, a := range attempts[id] {
			if a != want.doneAt {
				misfiled = append(misfiled, fmt.Sprintf("%s done at attempt %d, planned at %d (the attempt count did not survive a fault)", id, a, want.doneAt))
			}
		}
	}
	for id := range done {
		if _, ok := plan[id]; !ok {
			unknown++
		}
	}
	for id := range parked {
		if _, ok := plan[id]; !ok {
			unknown++
		}
	}
	duplicates := dupDone + dupParked + doneAndParked

	// The bound. Every delivery the broker had not seen acked when a fault
	// struck can leave at most one extra copy or ledger line behind (its
	// handler ran, or its retry/park copy was confirmed, but the ack was
	// lost), and a consumer holds at most prefetch unacked deliveries — the
	// in-flight handlers (concurrency) are among them. So each fault adds
	// at most prefetch duplicates. A broker restart can also repeat the
	// quorum delay queues' at-least-once dead-lettering of what it had
	// forwarded but not yet settled: at most the dead-letter worker's
	// prefetch per delay queue.
	// A blocked publish waits before it sends anything, so an alarm adds
	// no duplicates. A node stop can strike every daemon (each holds at
	// most prefetch deliveries).
	faults := kills + forced + restarts + stops
	bound := spec.prefetch * (faults + stops*(max(spec.daemons, 1)-1))
	if spec.queueType == retrycore.QueueQuorum {
		// A stopped node's delay queue replicas: the same dead-letter window.
		bound += (restarts + stops) * len(p.Retry.Delays) * dlxWorkerPrefetch(t)
	}
	nDone, nParked := 0, 0
	for _, id := range ids {
		if done[id] > 0 {
			nDone++
		}
		if parked[id] > 0 {
			nParked++
		}
	}
	brokertest.Figures(t, "conservation: queue_type=%s%s messages=%d kills=%d forced_closes=%d broker_restarts=%d node_stops=%d alarms=%d (done while blocked %d) done=%d parked=%d missing=%d duplicates=%d (done_twice=%d parked_twice=%d done_and_parked=%d; bound %d) misfiled=%d outstanding_at_last_fault=%d prefetch=%d concurrency=%d duration=%s (publish %s, faults %s, broker away %s)",
		spec.queueType, several(spec.daemons), len(ids), kills, forced, restarts, stops, spec.alarms, blockedDone, nDone, nParked, missing, duplicates, dupDone, dupParked, doneAndParked, bound,
		len(misfiled), outstanding, spec.prefetch, spec.concurrency, time.Since(start).Round(100*time.Millisecond), published.Round(100*time.Millisecond),
		faultsDone.Round(100*time.Millisecond), away.Round(100*time.Millisecond))

	if outstanding <= 0 {
		t.Errorf("the last fault struck after every message was finished; it tested nothing")
	}
	if missing != 0 {
		t.Errorf("%d message(s) lost (neither done nor parked), e.g. %v", missing, missingIDs)
	}
	if unknown != 0 {
		t.Errorf("%d id(s) in the ledger or parking lot that were never published", unknown)
	}
	if len(misfiled) > 0 {
		t.Errorf("%d message(s) did not meet their planned fate, e.g. %v", len(misfiled), misfiled[:min(len(misfiled), 10)])
	}
	if duplicates > bound {
		t.Errorf("%d duplicates, more than the bound %d (prefetch %d × %d faults)", duplicates, bound, spec.prefetch, faults)
	}
}

// planned is the ledger handler's plan for one id.
type planned struct {
	fate   string // poison | exhausted | flaky | done
	doneAt int    // the attempt that succeeds (flaky, done)
}

// parkKind is the x-failure-kind the message must be parked with, or ""
// when it must be done.
func (p planned) parkKind() string {
	switch p.fate {
	case "poison":
		return retrycore.KindPermanent
	case "exhausted":
		return retrycore.KindRetriesExhausted
	}
	return ""
}

// listed reports whether the management API lists a connection whose
// client-given name starts with prefix.
func listed(t *testing.T, m *broker.Management, prefix string) bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	conns, err := m.Connections(ctx)
	if err != nil {
		t.Fatalf("list connections: %v", err)
	}
	for _, c := range conns {
		if strings.HasPrefix(c.ClientName(), prefix) {
			return true
		}
	}
	return false
}

// depthOf reads a queue's ready count on a connection of its own (the
// broker may have restarted since the test's other connections opened).
func depthOf(t *testing.T, queue string) int {
	t.Helper()
	c := brokertest.Dial(t, "")
	defer c.Close()
	ch, err := c.Channel()
	if err != nil {
		t.Fatal(err)
	}
	return brokertest.Depth(t, ch, queue)
}

// buildLedgerHandler builds testdata/handlers/ledger into a temp dir.
func buildLedgerHandler(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "ledger")
	build := exec.Command("go", "build", "-o", bin, "./testdata/handlers/ledger")
	build.Dir = "../.." // the repository root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build the ledger handler: %v\n%s", err, out)
	}
	return bin
}

// ledgerPlan asks the handler (ledger --plan) what it will do with each id.
func ledgerPlan(t *testing.T, handler string, ids []string) map[string]planned {
	t.Helper()
	cmd := exec.Command(handler, "--plan")
	cmd.Stdin = strings.NewReader(strings.Join(ids, "\n") + "\n")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("ledger --plan: %v", err)
	}
	plan := map[string]planned{}
	counts := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) != 3 {
			t.Fatalf("ledger --plan: line %q", line)
		}
		n, _ := strconv.Atoi(f[2])
		plan[f[0]] = planned{fate: f[1], doneAt: n}
		counts[f[1]]++
	}
	if len(plan) != len(ids) {
		t.Fatalf("ledger --plan answered for %d of %d ids", len(plan), len(ids))
	}
	t.Logf("plan: %v", counts)
	return plan
}

// readLedger returns how often each id was done, and at which attempts.
func readLedger(t *testing.T, path string) (map[string]int, map[string][]int) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("ledger: %v", err)
	}
	defer f.Close()
	done := map[string]int{}
	attempts := map[string][]int{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		id, a, ok := strings.Cut(sc.Text(), " ")
		n, err := strconv.Atoi(a)
		if !ok || err != nil {
			t.Fatalf("ledger: torn line %q", sc.Text())
		}
		done[id]++
		attempts[id] = append(attempts[id], n)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return done, attempts
}

// holdHandlers makes the ledger handlers wait (on) or go on (off): they
// wait while the hold file exists.
func holdHandlers(t *testing.T, hold string, on bool) {
	t.Helper()
	var err error
	if on {
		err = os.WriteFile(hold, nil, 0o600)
	} else {
		err = os.Remove(hold)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// ledgerProgress watches the ledger grow.
type ledgerProgress struct {
	path string
}

func (l *ledgerProgress) lines(t *testing.T) int {
	t.Helper()
	b, err := os.ReadFile(l.path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return bytes.Count(b, []byte("\n"))
}

// distinct is how many different ids the ledger holds.
func (l *ledgerProgress) distinct(t *testing.T) int {
	t.Helper()
	b, err := os.ReadFile(l.path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, line := range bytes.Split(b, []byte("\n")) {
		if id, _, ok := bytes.Cut(line, []byte(" ")); ok {
			seen[string(id)] = true
		}
	}
	return len(seen)
}

// waitGrowth returns once the ledger grew by n lines, or after at most d.
func (l *ledgerProgress) waitGrowth(t *testing.T, n int, d time.Duration) {
	t.Helper()
	from := l.lines(t)
	brokertest.Poll(d, 10*time.Millisecond, func() bool { return l.lines(t) >= from+n })
}

// dlxWorkerPrefetch is how many dead-lettered messages a quorum queue's
// at-least-once dead-letter worker forwards before they are settled.
func dlxWorkerPrefetch(t *testing.T) int {
	t.Helper()
	out, err := clustertest.Rabbitmqctl(t, 30*time.Second, "eval", "application:get_env(rabbit, dead_letter_worker_consumer_prefetch).")
	if err == nil {
		s := strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(out), "{ok,"), "}")
		if n, err := strconv.Atoi(s); err == nil {
			return n
		}
	}
	return 32 // RabbitMQ's default
}

// writePipelineFile writes p as pipeline.yaml for the binary.
func writePipelineFile(t *testing.T, p retrycore.Pipeline) string {
	t.Helper()
	var delays []string
	for _, d := range p.Retry.Delays {
		delays = append(delays, d.Text)
	}
	yaml := fmt.Sprintf(`# written by %s
name: %s
queue_type: %s
main: {exchange: %s, queue: %s, routing_key: %s}
retry: {exchange: %s, routing_key: %s, delays: [%s]}
error: {exchange: %s, queue: %s, routing_key: %s}
max_retries: %d
prefetch: %d
concurrency: %d
handler_timeout: %s
`, t.Name(), p.Name, p.QueueType, p.Main.Exchange, p.Main.Queue, p.Main.RoutingKey, p.Retry.Exchange, p.Retry.RoutingKey,
		strings.Join(delays, ", "), p.Error.Exchange, p.Error.Queue, p.Error.RoutingKey, p.MaxRetries, p.Prefetch, p.Concurrency, p.HandlerTimeout.Text)
	file := filepath.Join(t.TempDir(), "pipeline.yaml")
	if err := os.WriteFile(file, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := retrycore.LoadPipeline(file); err != nil {
		t.Fatalf("the test's own pipeline file: %v", err)
	}
	return file
}

// daemonProc is one `parkinglot daemon` process of the binary.
type daemonProc struct {
	cmd  *exec.Cmd
	log  *procLog
	done chan struct{} // closed when the process was waited for
	err  error         // Wait's result, after done
}

// startDaemon starts the binary with args; the test kills it at the end
// if it still runs, and shows its log if the test failed.
func startDaemon(t *testing.T, c *cli, args ...string) *daemonProc {
	t.Helper()
	d := &daemonProc{cmd: c.command(args...), log: newProcLog(), done: make(chan struct{})}
	d.cmd.Stdout, d.cmd.Stderr = d.log, d.log
	// Handlers orphaned by a kill -9 hold the log pipe until they exit.
	d.cmd.WaitDelay = 10 * time.Second
	if err := d.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		d.err = d.cmd.Wait()
		close(d.done)
	}()
	t.Cleanup(func() {
		_ = d.cmd.Process.Kill()
		select {
		case <-d.done:
		case <-time.After(30 * time.Second):
			t.Errorf("daemon pid %d not reaped", d.cmd.Process.Pid)
		}
		if t.Failed() {
			t.Logf("daemon pid %d log (last lines):\n%s", d.cmd.Process.Pid, d.log.tail(40))
		}
	})
	return d
}

// waitConsuming waits for a "consuming" log line at or after line index
// from, failing the test if the daemon exits first or timeout passes.
func (d *daemonProc) waitConsuming(t *testing.T, from int, timeout time.Duration) {
	t.Helper()
	if _, err := d.log.wait("msg=consuming", from, timeout, d.done); err != nil {
		t.Fatalf("daemon pid %d: %v\n%s", d.cmd.Process.Pid, err, d.log.tail(20))
	}
}

// waitLine waits for a log line containing s at or after line index from.
func (d *daemonProc) waitLine(t *testing.T, s string, from int, timeout time.Duration) {
	t.Helper()
	if _, err := d.log.wait(s, from, timeout, d.done); err != nil {
		t.Fatalf("daemon pid %d: %v\n%s", d.cmd.Process.Pid, err, d.log.tail(20))
	}
}

// kill9 sends SIGKILL and waits for the process to be gone.
func (d *daemonProc) kill9(t *testing.T) {
	t.Helper()
	if err := d.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatalf("kill -9: %v", err)
	}
	select {
	case <-d.done:
	case <-time.After(30 * time.Second):
		t.Fatal("the daemon did not die after SIGKILL")
	}
}

// stop sends SIGTERM and requires a clean exit (status 0).
func (d *daemonProc) stop(t *testing.T) {
	t.Helper()
	if err := d.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatalf("SIGTERM: %v", err)
	}
	select {
	case <-d.done:
		if d.err != nil {
			t.Fatalf("daemon exit after SIGTERM: %v, want status 0\n%s", d.err, d.log.tail(20))
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the daemon did not exit within 60s of SIGTERM")
	}
}

// procLog collects a process's output lines and lets a test wait for one.
type procLog struct {
	mu      sync.Mutex
	lines   []string
	partial []byte
	notify  chan struct{} // closed and replaced on every new line
}

func newProcLog() *procLog { return &procLog{notify: make(chan struct{})} }

func (l *procLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.partial = append(l.partial, p...)
	added := false
	for {
		i := bytes.IndexByte(l.partial, '\n')
		if i < 0 {
			break
		}
		l.lines = append(l.lines, string(l.partial[:i]))
		l.partial = l.partial[i+1:]
		added = true
	}
	if added {
		close(l.notify)
		l.notify = make(chan struct{})
	}
	return len(p), nil
}

func (l *procLog) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.lines)
}

// all returns the whole output, including a last unterminated line.
func (l *procLog) all() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n") + "\n" + string(l.partial)
}

func (l *procLog) tail(n int) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	from := max(len(l.lines)-n, 0)
	return strings.Join(l.lines[from:], "\n")
}

// wait returns the index of the first line at or after from that contains
// s; it gives up when exited is closed (after a last look) or timeout passes.
func (l *procLog) wait(s string, from int, timeout time.Duration, exited <-chan struct{}) (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	gone := false
	for {
		l.mu.Lock()
		for i := from; i < len(l.lines); i++ {
			if strings.Contains(l.lines[i], s) {
				l.mu.Unlock()
				return i, nil
			}
		}
		from = max(from, len(l.lines))
		notify := l.notify
		l.mu.Unlock()
		if gone {
			return 0, fmt.Errorf("exited before logging %q", s)
		}
		select {
		case <-notify:
		case <-exited:
			gone = true // one more look at what it printed last
		case <-ctx.Done():
			return 0, fmt.Errorf("no %q in the log within %v", s, timeout)
		}
	}
}

// several is " daemons=N" for a run with more than one daemon, else "".
func several(daemons int) string {
	if daemons > 1 {
		return fmt.Sprintf(" daemons=%d", daemons)
	}
	return ""
}
