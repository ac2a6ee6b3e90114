//go:build cluster && integration

package cli_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/broker/brokertest"
	"github.com/parkinglot/parkinglot/broker/brokertest/clustertest"
)

// confirmTimeout is the replay's --confirm-timeout in the minority test:
// longer than stopping two nodes takes here (10-13 s), so the replay gives
// up after the minority began, not while the nodes are still stopping.
const confirmTimeout = 20 * time.Second

// minorityHold is how long the minority lasts at least: the fault's length,
// not a wait for an event. The replay gives up within it.
const minorityHold = confirmTimeout + 10*time.Second

// TestClusterReplayMinority stops two of the three nodes during a replay
// of a quorum parking lot to a quorum queue (the binary, --url listing the
// three nodes), keeping the node the replay publishes through. While the
// minority lasts no quorum queue can commit: publisher confirms are neither
// acked nor nacked (nothing reaches the audit log, which records each
// confirmed or failed message). The replay stops by itself once nothing
// was confirmed for --confirm-timeout (exit 3) and reports every message it
// had sent as "outcome unknown"; the nodes are started again, and every
// message is accounted for: the ones reported as not done are still parked
// (never acked), none is lost, and the duplicates are at most two windows:
// the copies whose outcome was unknown that the broker enqueued after all
// (at most the window in flight), and messages whose copy was confirmed
// and whose removal (ack) the parking lot had not committed when it lost
// its majority (at most a window's acks, one for each confirm). Exit comes
// within --confirm-timeout and one bounded wait (broker.CloseWait): once
// the replay gave up it drops its publishing connection at once, and only
// the parking lot consumer's cancel is waited for.
func TestClusterReplayMinority(t *testing.T) {
	const n, window = 4000, 256
	clustertest.UseCluster(t)
	m := clustertest.ClusterManagement(t)
	c := newCLI(t)
	ch := brokertest.Channel(t)
	q, dst := brokertest.Name(t, "dlq"), brokertest.Name(t, "dst")
	brokertest.DeclareQueue(t, ch, q, quorumArgs)
	brokertest.DeclareQueue(t, ch, dst, quorumArgs)
	parkN(t, ch, q, n)

	connName := "parkinglot-test " + q
	audit := filepath.Join(t.TempDir(), "audit.jsonl")
	c.Env = append(c.Env, "PARKINGLOT_CONNECTION_NAME="+connName, "PARKINGLOT_AUDIT_LOG="+audit)
	start := time.Now()
	r := startBinary(t, c, "replay", q, "--all", "--to", ":"+dst, "--yes", "--rate", "200", "--window", fmt.Sprint(window),
		"--confirm-timeout", confirmTimeout.String(), "-o", "json")

	// The node the replay publishes through survives; the other two stop.
	conns := clustertest.ConnectionNodes(t, m, connName, 30*time.Second)
	var survivor string
	for name, node := range conns {
		if strings.HasSuffix(name, " publish") {
			survivor = node
		}
	}
	if survivor == "" {
		t.Fatalf("the management API lists no publish connection of the replay: %v", conns)
	}
	var stop []clustertest.ClusterNode
	for _, cn := range clustertest.ClusterNodes() {
		if cn.Node != survivor {
			stop = append(stop, cn)
		}
	}
	brokertest.Eventually(t, 2*time.Minute, 100*time.Millisecond, func() bool {
		if r.exited() {
			t.Fatalf("the replay ended (exit %d) before the fault\nstderr: %s", r.code, r.stderr.String())
		}
		return clusterDepth(t, dst) >= n/5
	}, func() string { return "the replay stalled before the fault\nstderr: " + r.stderr.String() })
	atFault := clusterDepth(t, dst)
	took := clustertest.StopNodes(t, stop...)
	if r.exited() {
		t.Fatalf("the replay ended (exit %d) before the minority began: the fault tested nothing\nstderr: %s", r.code, r.stderr.String())
	}
	settledBefore := settledByBroker(t, audit)
	faultAt := time.Now()
	// Sampled before the replay gives up (its failures go to the audit log).
	time.Sleep(confirmTimeout / 2) // part of the fault's length, not a wait for an event
	settledDuring := settledByBroker(t, audit) - settledBefore
	if r.exited() {
		t.Errorf("the replay ended (exit %d) before --confirm-timeout passed\nstderr: %s", r.code, r.stderr.String())
	}
	// The replay gives up by itself: nothing confirmed for --confirm-timeout.
	code := r.wait(t, 3*time.Minute)
	exitAfter := time.Since(faultAt)
	if rest := minorityHold - time.Since(faultAt); rest > 0 {
		time.Sleep(rest) // the rest of the minority (the fault itself)
	}
	restartTook := clustertest.StartCluster(t)
	clustertest.QueueLeader(t, m, q)
	clustertest.QueueLeader(t, m, dst)

	// What the replay said about each message.
	done := map[string]bool{}
	failed := map[string]string{}
	var reasons []string
	for _, line := range strings.Split(strings.TrimSpace(r.stdout.String()), "\n") {
		var e struct {
			Event, ID, Error string
		}
		if json.Unmarshal([]byte(line), &e) != nil || e.ID == "" {
			continue
		}
		switch e.Event {
		case "failed":
			failed[e.ID] = e.Error
			why := strings.TrimPrefix(e.Error, ":"+dst+": ")
			if !slices.Contains(reasons, why) {
				reasons = append(reasons, why)
			}
		case "replayed":
			done[e.ID] = true
		}
	}

	// The management API may still name the leader of before the fault,
	// and a quorum queue with no leader yet answers a get with nothing (a
	// failed run drained both queues a second before the parking lot
	// elected one: every parked message looked lost). A confirmed write
	// needs a leader with its log. Even then the new leader returns the
	// deliveries the replay's consumer held (it died with the minority)
	// only once it has handled that consumer's end, and until then they
	// are neither ready nor gone (a run counted 2,491 "lost" right after
	// the election, with all of them in the leader's log). So both queues
	// are consumed until every message is in one of them, or until
	// accountedWithin: a message lost never comes back, and fails below.
	ch = brokertest.Channel(t)
	const probe = "leader-probe"
	for _, name := range []string{q, dst} {
		brokertest.Publish(t, ch, "", name, amqp.Publishing{MessageId: probe, Body: []byte(probe)})
	}
	countStart := time.Now()
	parked, arrived := consumeUntilAccounted(t, ch, q, dst, probe, n)
	countTook := time.Since(countStart)
	lost, dups, both, bothFailed, failedNotParked, doneNotArrived, unknownWording, notSent := 0, 0, 0, 0, 0, 0, 0, 0
	var examples []string
	for i := range n {
		id := fmt.Sprintf("m-%05d", i)
		switch {
		case parked[id] == 0 && arrived[id] == 0:
			lost++
		case parked[id] > 0 && arrived[id] > 0:
			both++
			if _, ok := failed[id]; ok {
				bothFailed++ // an unconfirmed copy the broker enqueued after all
			}
		}
		dups += max(arrived[id]-1, 0) + max(parked[id]-1, 0)
		if why, ok := failed[id]; ok {
			if parked[id] == 0 {
				failedNotParked++
				if len(examples) < 5 {
					examples = append(examples, id+": "+why)
				}
			}
			switch {
			case strings.Contains(why, "outcome unknown"):
				unknownWording++
			case strings.Contains(why, "not sent"):
				notSent++
			}
		}
		if done[id] && arrived[id] == 0 {
			doneNotArrived++
		}
	}
	dups += both
	brokertest.Figures(t, "cluster replay, minority: %v stopped (stop %v) at %d of %d delivered, %s alone for %v: settled_during_minority=%d; stopped by itself: exit=%d %v after the fault; replayed=%d reported_not_done=%d (outcome unknown wording: %d) reported_not_done_not_parked=%d; after restart (%v): lost=%d duplicates=%d (delivered_and_still_parked=%d of which reported not done %d; bound: two windows, %d) still_parked=%d (all found %v after the probes) duration=%v; reasons: %s",
		nodeNames(stop), took.Round(time.Millisecond), atFault, n, survivor, minorityHold, settledDuring, code, exitAfter.Round(100*time.Millisecond),
		len(done), len(failed), unknownWording, failedNotParked, restartTook.Round(100*time.Millisecond), lost, dups, both, bothFailed, 2*window, len(parked), countTook.Round(100*time.Millisecond),
		time.Since(start).Round(100*time.Millisecond), strings.Join(reasons, " | "))
	t.Logf("stderr: %s", r.stderr.String())
	// Giving up is prompt: the stall, then the publishing connection is
	// dropped at once and only the parking lot consumer's cancel is waited
	// for, at most broker.CloseWait (a minority never answers it; the
	// consuming connection is then dropped too).
	if limit := confirmTimeout + broker.CloseWait + 10*time.Second; exitAfter > limit {
		t.Errorf("the replay exited %v after the minority began, want within %v (--confirm-timeout, then one bounded cancel)", exitAfter.Round(time.Second), limit)
	}
	if settledDuring != 0 {
		t.Errorf("%d messages settled (confirmed or nacked) while only %s ran", settledDuring, survivor)
	}
	if lost != 0 {
		t.Errorf("%d messages lost", lost)
	}
	if failedNotParked != 0 {
		t.Errorf("%d messages reported not done are no longer parked (acked), e.g. %v", failedNotParked, examples)
	}
	if doneNotArrived != 0 {
		t.Errorf("%d messages reported replayed are not at the destination", doneNotArrived)
	}
	if dups > 2*window {
		t.Errorf("%d duplicates, more than two windows (%d): the copies in flight and the removals not committed", dups, 2*window)
	}
	if len(failed) == 0 {
		t.Errorf("the stopped replay reported no message as not done: the minority held nothing in flight")
	}
	if sent := len(failed) - notSent; unknownWording != sent || sent == 0 {
		t.Errorf("%d of the %d messages sent but not confirmed are reported as \"outcome unknown\" (want all, and some)", unknownWording, sent)
	}
	if code != 3 {
		t.Errorf("exit %d, want 3 (some messages not done)", code)
	}
}

// settledByBroker counts the audit log's lines of messages the broker
// settled: confirmed (result ok) or refused. The lines of messages the
// replay itself gave up on (outcome unknown, not sent) are not the broker's
// doing.
func settledByBroker(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	n := 0
	for _, line := range bytes.Split(b, []byte("\n")) {
		var e struct{ Result, Error string }
		if json.Unmarshal(line, &e) != nil {
			continue // the last, empty line
		}
		if e.Result != "ok" && (strings.Contains(e.Error, "outcome unknown") || strings.Contains(e.Error, "not sent")) {
			continue
		}
		n++
	}
	return n
}

func nodeNames(ns []clustertest.ClusterNode) []string {
	var out []string
	for _, n := range ns {
		out = append(out, n.Node)
	}
	return out
}

// accountedWithin bounds how long consumeUntilAccounted waits for the
// messages the new leader has not yet returned.
const accountedWithin = time.Minute

// consumeUntilAccounted consumes the parking lot and the destination (each
// delivery acked), counting each message id, until every one of the n
// replayed ids (m-00000 …) was delivered from one of them, or until
// accountedWithin passed; then it stops the consumers and takes what is
// left in both with gets, so that every copy is counted (duplicates too).
// skip is left out of the counts.
func consumeUntilAccounted(t *testing.T, ch *amqp.Channel, parkingLot, dst, skip string, n int) (parked, arrived map[string]int) {
	t.Helper()
	parked, arrived = map[string]int{}, map[string]int{}
	accounted := 0
	count := func(m map[string]int, d amqp.Delivery) {
		if d.MessageId == skip {
			return
		}
		if parked[d.MessageId]+arrived[d.MessageId] == 0 {
			accounted++
		}
		m[d.MessageId]++
	}
	type source struct {
		queue, tag string
		counts     map[string]int
		deliveries <-chan amqp.Delivery
	}
	sources := []*source{{queue: parkingLot, tag: "count-parked", counts: parked}, {queue: dst, tag: "count-arrived", counts: arrived}}
	for _, src := range sources {
		d, err := ch.Consume(src.queue, src.tag, false, false, false, false, nil)
		if err != nil {
			t.Fatalf("consume %s: %v", src.queue, err)
		}
		src.deliveries = d
	}
	take := func(src *source, d amqp.Delivery) {
		if err := d.Ack(false); err != nil {
			t.Fatalf("ack: %v", err)
		}
		count(src.counts, d)
	}
	deadline := time.After(accountedWithin)
wait:
	for accounted < n {
		select {
		case d := <-sources[0].deliveries:
			take(sources[0], d)
		case d := <-sources[1].deliveries:
			take(sources[1], d)
		case <-deadline:
			t.Logf("after %v, %d of %d messages accounted for", accountedWithin, accounted, n)
			break wait
		}
	}
	for _, src := range sources {
		if err := ch.Cancel(src.tag, false); err != nil {
			t.Fatalf("cancel the consumer of %s: %v", src.queue, err)
		}
		for d := range src.deliveries { // the ones sent before the cancel
			take(src, d)
		}
		for _, d := range brokertest.Drain(t, ch, src.queue) {
			count(src.counts, d)
		}
	}
	return parked, arrived
}
