//go:build cluster && integration

package cli_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/broker/brokertest"
	"github.com/parkinglot/parkinglot/broker/brokertest/clustertest"
	"github.com/parkinglot/parkinglot/retrycore"
)

// The cluster tests run against the three-node RabbitMQ 4.3 cluster of
// `make cluster` (clustertest.UseCluster: --url and --management-url list
// the three nodes) and stop and start its nodes; every node stopped is
// started again before the test ends.

// TestClusterDaemonConservationNodeStop stops the node the daemon consumes
// from during a 10,000-message quorum conservation run: the daemon moves on
// to another node of its URL list, and every message ends up done or
// parked (runConservation accounts for each id and bounds the duplicates).
func TestClusterDaemonConservationNodeStop(t *testing.T) {
	clustertest.UseCluster(t)
	m := clustertest.ClusterManagement(t)
	runConservation(t, conservationSpec{
		queueType:   retrycore.QueueQuorum,
		messages:    10000,
		nodeStops:   1,
		prefetch:    20,
		concurrency: 8,
		timeout:     6 * time.Minute,
		stopNode: func(t *testing.T, prefix string) func() {
			var node string
			for _, n := range clustertest.ConnectionNodes(t, m, prefix+" consume", 30*time.Second) {
				node = n
			}
			cn := clustertest.ClusterNodeByNode(t, node)
			took := clustertest.StopNode(t, cn)
			t.Logf("stopped %s, the node of the daemon's consume connection (%v)", node, took.Round(time.Millisecond))
			return func() {
				t.Logf("started %s again (%v)", node, clustertest.StartNode(t, cn).Round(time.Millisecond))
			}
		},
	})
}

// clusterRun is one run of the binary against the cluster.
type clusterRun struct {
	cmd            *exec.Cmd
	stdout, stderr bytes.Buffer
	done           chan struct{}
	code           int
}

// startBinary starts `parkinglot ARGS… --url <the three nodes>` with the
// test's CLI environment and a state folder of its own (the audit log).
func startBinary(t *testing.T, c *cli, args ...string) *clusterRun {
	t.Helper()
	r := &clusterRun{cmd: c.command(append(args, "--url", clustertest.ClusterURL())...), done: make(chan struct{})}
	r.cmd.Env = append(r.cmd.Env, "XDG_STATE_HOME="+t.TempDir())
	r.cmd.Stdout, r.cmd.Stderr = &r.stdout, &r.stderr
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		err := r.cmd.Wait()
		r.code = r.cmd.ProcessState.ExitCode()
		if err != nil && r.code == 0 {
			r.code = -1
		}
		close(r.done)
	}()
	t.Cleanup(func() {
		_ = r.cmd.Process.Kill()
		<-r.done
	})
	return r
}

// wait waits (bounded) for the run to end and returns its exit code.
func (r *clusterRun) wait(t *testing.T, timeout time.Duration) int {
	t.Helper()
	select {
	case <-r.done:
		return r.code
	case <-time.After(timeout):
		// Where it is stuck: the Go runtime prints every goroutine on
		// SIGABRT (SIGQUIT ends the command gracefully).
		_ = r.cmd.Process.Signal(syscall.SIGABRT)
		select {
		case <-r.done:
		case <-time.After(10 * time.Second):
		}
		t.Fatalf("%v still running after %v\nstderr: %s", r.cmd.Args[1:3], timeout, r.stderr.String())
		return 0
	}
}

func (r *clusterRun) exited() bool {
	select {
	case <-r.done:
		return true
	default:
		return false
	}
}

// clusterDepth reads a queue's ready count on a fresh connection to the
// cluster (the test's earlier connections may have been on a stopped node).
func clusterDepth(t *testing.T, queue string) int {
	t.Helper()
	return brokertest.Depth(t, brokertest.Channel(t), queue)
}

// parkN publishes n persistent, confirmed messages m-00000… to queue.
func parkN(t *testing.T, ch *amqp.Channel, queue string, n int) {
	t.Helper()
	body := bytes.Repeat([]byte("x"), 1024)
	for start := 0; start < n; start += 1000 {
		var msgs []amqp.Publishing
		for i := start; i < min(start+1000, n); i++ {
			msgs = append(msgs, amqp.Publishing{MessageId: fmt.Sprintf("m-%05d", i), Body: body, DeliveryMode: amqp.Persistent,
				Headers: amqp.Table{"x-last-error": "boom"}})
		}
		brokertest.PublishMany(t, ch, "", queue, msgs)
	}
}

var quorumArgs = amqp.Table{"x-queue-type": "quorum"}

// TestClusterReplayLeaderStop stops the parking lot's quorum leader during
// a 5,000-message replay (the binary, --url listing the three nodes):
// nothing is lost, duplicates stay within the window and share their
// x-replay-id.
func TestClusterReplayLeaderStop(t *testing.T) {
	const n, window = 5000, 512
	clustertest.UseCluster(t)
	m := clustertest.ClusterManagement(t)
	c := newCLI(t)
	ch := brokertest.Channel(t)
	q, dst := brokertest.Name(t, "dlq"), brokertest.Name(t, "dst")
	brokertest.DeclareQueue(t, ch, q, quorumArgs)
	brokertest.DeclareQueue(t, ch, dst, quorumArgs)
	parkN(t, ch, q, n)
	leader := clustertest.QueueLeader(t, m, q).Home()

	start := time.Now()
	// 100 a second: the replay outlasts a slow node stop (up to 16 s seen).
	r := startBinary(t, c, "replay", q, "--all", "--to", ":"+dst, "--yes", "--rate", "100", "--window", fmt.Sprint(window))
	// Stop the leader once a fifth has arrived (polling the destination's
	// depth with a deadline).
	brokertest.Eventually(t, 2*time.Minute, 100*time.Millisecond, func() bool {
		if r.exited() {
			t.Fatalf("the replay ended (exit %d) before the fault\nstderr: %s", r.code, r.stderr.String())
		}
		return clusterDepth(t, dst) >= n/5
	}, func() string { return "the replay stalled before the fault\nstderr: " + r.stderr.String() })
	conns := clustertest.ConnectionNodes(t, m, "parkinglot ", 30*time.Second) // the binary's, not the test's

	atFault := clusterDepth(t, dst)
	took := clustertest.StopNode(t, clustertest.ClusterNodeByNode(t, leader))
	if r.exited() {
		t.Errorf("the replay ended before the leader had stopped: the fault tested nothing")
	}
	code := r.wait(t, 5*time.Minute)
	elapsed := time.Since(start)
	newLeader := clustertest.QueueLeader(t, m, q).Home()

	ch = brokertest.Channel(t)
	parked := map[string]int{}
	for _, d := range brokertest.Drain(t, ch, q) {
		parked[d.MessageId]++
	}
	arrived := map[string][]string{}
	for _, d := range brokertest.Drain(t, ch, dst) {
		rid, _ := d.Headers["x-replay-id"].(string)
		arrived[d.MessageId] = append(arrived[d.MessageId], rid)
	}
	lost, dups, both := 0, 0, 0
	for i := range n {
		id := fmt.Sprintf("m-%05d", i)
		copies := arrived[id]
		if parked[id] == 0 && len(copies) == 0 {
			lost++
		}
		if parked[id] > 0 && len(copies) > 0 {
			both++
		}
		for _, rid := range copies[min(1, len(copies)):] {
			dups++
			if rid != copies[0] {
				t.Errorf("%s: duplicate with another x-replay-id (%s, %s)", id, copies[0], rid)
			}
		}
	}
	brokertest.Figures(t, "cluster replay, quorum leader %s stopped at %d of %d delivered (stop %v): exit=%d lost=%d duplicates=%d (same x-replay-id; bound %d) delivered_and_still_parked=%d still_parked=%d new_leader=%s replay_connections=%v duration=%v",
		leader, atFault, n, took.Round(time.Millisecond), code, lost, dups, window, both, len(parked), newLeader, conns, elapsed.Round(100*time.Millisecond))
	if lost != 0 {
		t.Errorf("%d messages lost", lost)
	}
	if dups > window {
		t.Errorf("%d duplicates, more than the window %d", dups, window)
	}
	if code != 0 && code != 3 {
		t.Errorf("replay exit %d\nstderr: %s", code, r.stderr.String())
	}
	if code == 0 && len(parked) != 0 {
		t.Errorf("exit 0 but %d still parked", len(parked))
	}
	t.Logf("stderr: %s", r.stderr.String())
}

// TestClusterBrowseLeaderStop lists a 5,000-message quorum parking lot
// (`list -o json`) over and over while its leader is stopped: every run
// sees every message, except one whose own connection was on the stopped
// node, which ends with the one-line "connection lost" error; the queue
// keeps them all.
func TestClusterBrowseLeaderStop(t *testing.T) {
	const n = 5000
	clustertest.UseCluster(t)
	m := clustertest.ClusterManagement(t)
	c := newCLI(t)
	ch := brokertest.Channel(t)
	q := brokertest.Name(t, "dlq")
	brokertest.DeclareQueue(t, ch, q, quorumArgs)
	parkN(t, ch, q, n)
	leader := clustertest.ClusterNodeByNode(t, clustertest.QueueLeader(t, m, q).Home())

	stopped := make(chan time.Duration, 1)
	go func() { stopped <- stopNodeNoFatal(t, leader) }()
	t.Cleanup(func() { clustertest.StartNode(t, leader) })
	runs, during, failures, interrupted := 0, 0, 0, 0
	var took time.Duration
	for finished := false; !finished || runs < 1; {
		select {
		case took = <-stopped:
			finished = true
		default:
		}
		r := startBinary(t, c, "list", q, "-o", "json")
		code := r.wait(t, 3*time.Minute)
		runs++
		if !finished {
			during++
		}
		ids := map[string]bool{}
		for _, line := range strings.Split(strings.TrimSpace(r.stdout.String()), "\n") {
			var s struct {
				ID string `json:"id"`
			}
			if json.Unmarshal([]byte(line), &s) == nil && s.ID != "" {
				ids[s.ID] = true
			}
		}
		switch {
		case code == 0 && len(ids) == n:
		case code == 1 && strings.Count(strings.TrimSpace(r.stderr.String()), "\n") == 0 &&
			(strings.Contains(r.stderr.String(), "connection to the broker lost; held messages return to the queue") ||
				strings.Contains(r.stderr.String(), broker.ErrConsumerCancelled.Error()) ||
				strings.Contains(r.stderr.String(), "has not told its ready count")):
			// The run's own connection was on the stopped node (or the
			// node cancelled its consumer as it stopped, or the queue had
			// no leader to answer for longer than a pass waits): it ends
			// with one line saying so, having taken nothing (checked
			// below: every message still parked); the next run goes on.
			interrupted++
		default:
			failures++
			t.Errorf("list run %d (node stop under way: %v): exit %d, %d of %d ids\nstderr: %s", runs, !finished, code, len(ids), n, r.stderr.String())
		}
		if runs > 50 {
			t.Fatal("the node stop did not finish within 50 list runs")
		}
	}
	if took < 0 {
		t.Fatal("stopping the leader failed")
	}
	left := clusterDepth(t, q)
	brokertest.Figures(t, "cluster browse, quorum leader %s stopped (stop %v): list runs=%d (%d while the node was stopping) complete=%d interrupted_by_their_node=%d failed=%d messages=%d still_in_queue=%d lost=%d",
		leader.Node, took.Round(time.Millisecond), runs, during, runs-interrupted-failures, interrupted, failures, n, left, n-left)
	if left != n {
		t.Errorf("%d messages in the parking lot after browsing, want %d", left, n)
	}
}

// stopNodeNoFatal stops a node from a goroutine other than the test's
// (t.Fatal may not be called there): -1 when the stop failed.
func stopNodeNoFatal(t *testing.T, n clustertest.ClusterNode) time.Duration {
	start := time.Now()
	out, err := exec.Command(filepath.Join("..", "..", ".ci", "brokers"), "stop", n.Name).CombinedOutput()
	if err != nil {
		t.Errorf(".ci/brokers stop %s: %v\n%s", n.Name, err, out)
		return -1
	}
	return time.Since(start)
}

// TestClusterClassicHomeNodeDown: a classic parking lot whose home node is
// down gives one clear line (list and replay) and loses nothing: its
// messages are all there once the node is back.
func TestClusterClassicHomeNodeDown(t *testing.T) {
	const n = 100
	clustertest.UseCluster(t)
	m := clustertest.ClusterManagement(t)
	c := newCLI(t)
	ch := brokertest.Channel(t)
	q, dst := brokertest.Name(t, "dlq"), brokertest.Name(t, "dst")
	brokertest.DeclareQueue(t, ch, q, amqp.Table{"x-queue-type": "classic"})
	brokertest.DeclareQueue(t, ch, dst, quorumArgs)
	parkN(t, ch, q, n)
	home := clustertest.ClusterNodeByNode(t, clustertest.QueueLeader(t, m, q).Home())
	clustertest.StopNode(t, home)

	var lines []string
	for _, args := range [][]string{{"list", q}, {"replay", q, "--all", "--to", ":" + dst, "--yes"}} {
		r := startBinary(t, c, args...)
		code := r.wait(t, 2*time.Minute)
		errText := strings.TrimSpace(r.stderr.String())
		lines = append(lines, fmt.Sprintf("%s: exit %d: %s", args[0], code, errText))
		if code == 0 || strings.Count(errText, "\n") > 0 || errText == "" {
			t.Errorf("%s with the home node down: exit %d, want one line of error:\n%s", args[0], code, errText)
		}
		if strings.Contains(errText, "guest:guest") {
			t.Errorf("password shown: %s", errText)
		}
	}
	clustertest.StartNode(t, home)
	left, arrived := clusterDepth(t, q), clusterDepth(t, dst)
	brokertest.Figures(t, "cluster classic parking lot, home node %s down: messages=%d still_parked_after_restart=%d at_destination=%d lost=%d; %s",
		home.Node, n, left, arrived, n-left-arrived, strings.Join(lines, "; "))
	if left+arrived != n {
		t.Errorf("%d parked + %d delivered, want %d", left, arrived, n)
	}
}
