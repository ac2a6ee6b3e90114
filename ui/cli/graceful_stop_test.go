//go:build integration

package cli_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
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

// TestGracefulStopRedeliversNothing stops the real daemon binary with
// SIGTERM 20 times in the middle of a backlog, on a classic and on a
// quorum pipeline, restarting it after each stop. Its handler
// (testdata/handlers/record.sh) records every message id it handled; each
// handled message was acked before the daemon exited (a graceful stop lets
// in-flight handlers finish and acks them), so an id recorded twice is
// finished work the stop handed back. There must be none; and once a last
// daemon has worked the backlog off, every id is recorded (nothing lost).
func TestGracefulStopRedeliversNothing(t *testing.T) {
	for _, qt := range []string{retrycore.QueueClassic, retrycore.QueueQuorum} {
		t.Run(qt, func(t *testing.T) {
			runGracefulStops(t, qt, 20)
		})
	}
}

// gracefulBatch is how many more messages each daemon handles before it is
// stopped; the backlog holds enough for every stop to land mid-stream.
const gracefulBatch = 60

// runGracefulStops publishes a backlog, then starts and SIGTERMs the daemon
// stops times, each after it handled gracefulBatch more messages, then lets
// a last daemon finish the backlog, and counts the ids handled twice.
func runGracefulStops(t *testing.T, queueType string, stops int) {
	start := time.Now()
	p := retrytest.Pipeline(t, queueType, time.Second)
	// Many deliveries in flight and many acks at the moment of the stop:
	// a wide prefetch, several handlers at once.
	p.Prefetch, p.Concurrency = 100, 8
	file := writePipelineFile(t, p)
	c := newCLI(t)
	if code, stdout, stderr := c.run("topology", "declare", "-f", file); code != 0 {
		t.Fatalf("topology declare: exit %d\n%s%s", code, stdout, stderr)
	}
	n := stops*gracefulBatch + 20*p.Prefetch
	ids := make([]string, n)
	msgs := make([]amqp.Publishing, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("msg-%05d", i)
		msgs[i] = amqp.Publishing{MessageId: ids[i], DeliveryMode: amqp.Persistent, Body: []byte("x")}
	}
	ch := brokertest.Channel(t)
	brokertest.PublishMany(t, ch, p.Main.Exchange, p.Main.RoutingKey, msgs)

	handler, err := filepath.Abs("../../testdata/handlers/record.sh")
	if err != nil {
		t.Fatal(err)
	}
	record := filepath.Join(t.TempDir(), "handled.txt")
	args := []string{"daemon", "-f", file, "--exec", handler, record}
	handled := func() []string {
		b, err := os.ReadFile(record)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		return strings.Fields(string(b))
	}
	for i := range stops {
		from := len(handled())
		d := startDaemon(t, c, args...)
		d.waitConsuming(t, 0, 60*time.Second)
		brokertest.Eventually(t, 30*time.Second, 5*time.Millisecond,
			func() bool { return len(handled()) >= from+gracefulBatch },
			func() string {
				return fmt.Sprintf("stop %d: %d handled, want %d", i+1, len(handled()), from+gracefulBatch)
			})
		d.stop(t)
		if got := brokertest.Depth(t, ch, p.Main.Queue); got == 0 {
			t.Fatalf("stop %d landed after the backlog was worked off; the test needs a longer one", i+1)
		}
	}
	stopped := len(handled())
	last := startDaemon(t, c, args...)
	last.waitConsuming(t, 0, 60*time.Second)
	brokertest.Eventually(t, 60*time.Second, 20*time.Millisecond,
		func() bool { return distinct(handled()) == n },
		func() string { return fmt.Sprintf("%d of %d ids handled", distinct(handled()), n) })
	last.stop(t)

	all := handled()
	twice := twiceHandled(all)
	t.Logf("%s, %d stops: %d handled before the last start (%d ids), %d handled in all for %d ids; handled twice: %d %v (%v)",
		queueType, stops, stopped, distinct(all[:stopped]), len(all), n, len(twice), twice[:min(len(twice), 10)], time.Since(start).Round(time.Second))
	if len(twice) > 0 {
		t.Errorf("%d message(s) handled and acked before a graceful stop were handled again, e.g. %v", len(twice), twice[:min(len(twice), 10)])
	}
	if depth := brokertest.Depth(t, ch, p.Main.Queue); depth != 0 {
		t.Errorf("main queue holds %d after every id was handled", depth)
	}
}

// distinct counts the different ids.
func distinct(ids []string) int {
	seen := make(map[string]bool, len(ids))
	for _, id := range ids {
		seen[id] = true
	}
	return len(seen)
}

// twiceHandled lists the ids that occur more than once, sorted.
func twiceHandled(ids []string) []string {
	count := map[string]int{}
	for _, id := range ids {
		count[id]++
	}
	var twice []string
	for id, k := range count {
		if k > 1 {
			twice = append(twice, id)
		}
	}
	slices.Sort(twice)
	return twice
}

// TestGracefulStopReplayRedeliversNothing interrupts the binary's replay of
// a parking lot (SIGTERM) 10 times mid-stream, on a classic and on a quorum
// parking lot, and starts it again after each. A replay removes a parked
// message only after its copy was confirmed; a removal the broker dropped
// at the close would leave the message parked, and the next replay would
// send it again. So no id may reach the destination twice, and every id
// reaches it once.
func TestGracefulStopReplayRedeliversNothing(t *testing.T) {
	for _, qt := range []string{retrycore.QueueClassic, retrycore.QueueQuorum} {
		t.Run(qt, func(t *testing.T) {
			runReplayStops(t, qt, 10)
		})
	}
}

func runReplayStops(t *testing.T, queueType string, stops int) {
	const batch = 150
	start := time.Now()
	c := newCLI(t)
	c.Env = append(c.Env, "XDG_STATE_HOME="+t.TempDir())
	ch := brokertest.Channel(t)
	q, dst := brokertest.Name(t, "dlq"), brokertest.Name(t, "dst")
	brokertest.DeclareQueue(t, ch, q, amqp.Table{"x-queue-type": queueType})
	brokertest.DeclareQueue(t, ch, dst, amqp.Table{"x-queue-type": queueType})
	n := (stops + 4) * batch
	msgs := make([]amqp.Publishing, n)
	for i := range msgs {
		msgs[i] = amqp.Publishing{MessageId: fmt.Sprintf("m-%05d", i), DeliveryMode: amqp.Persistent, Body: []byte("x"),
			Headers: amqp.Table{"x-last-error": "boom"}}
	}
	brokertest.PublishMany(t, ch, "", q, msgs)
	args := []string{"replay", q, "--all", "--to", ":" + dst, "--yes", "--rate", "1000", "--window", "256"}
	for i := range stops {
		from := brokertest.Depth(t, ch, dst)
		r := startDaemon(t, c, args...)
		brokertest.Eventually(t, 30*time.Second, 5*time.Millisecond,
			func() bool { return brokertest.Depth(t, ch, dst) >= from+batch },
			func() string {
				return fmt.Sprintf("stop %d: %d copies, want %d", i+1, brokertest.Depth(t, ch, dst), from+batch)
			})
		if err := r.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		select {
		case <-r.done:
		case <-time.After(60 * time.Second):
			t.Fatalf("stop %d: the replay did not exit within 60s of SIGTERM", i+1)
		}
		if brokertest.Depth(t, ch, q) == 0 {
			t.Fatalf("stop %d landed after the parking lot was emptied; the test needs more messages", i+1)
		}
	}
	last := startDaemon(t, c, args...)
	select {
	case <-last.done:
	case <-time.After(60 * time.Second):
		t.Fatal("the last replay did not finish within 60s")
	}
	if last.err != nil {
		t.Fatalf("the last replay: %v\n%s", last.err, last.log.tail(10))
	}
	var copies []string
	for _, d := range brokertest.Drain(t, ch, dst) {
		copies = append(copies, d.MessageId)
	}
	parked := brokertest.Depth(t, ch, q)
	twice := twiceHandled(copies)
	t.Logf("%s parking lot, %d interrupted replays: %d copies for %d ids, still parked %d; sent twice: %d %v (%v)",
		queueType, stops, len(copies), n, parked, len(twice), twice[:min(len(twice), 10)], time.Since(start).Round(time.Second))
	if len(twice) > 0 {
		t.Errorf("%d message(s) replayed and removed before an interrupt were replayed again, e.g. %v", len(twice), twice[:min(len(twice), 10)])
	}
	if distinct(copies) != n || parked != 0 {
		t.Errorf("%d of %d ids reached the destination, %d still parked", distinct(copies), n, parked)
	}
}

// TestReplayThatGaveUpExitsPromptly mutes the broker (a proxy that passes
// nothing on, both ways: a node that never answers, as in a cluster
// minority) in the middle of the binary's replay. The replay gives up once
// nothing was confirmed for --confirm-timeout (exit 3), drops its
// publishing connection at once, and waits only for its consumer's cancel
// (at most broker.CloseWait): it exits within --confirm-timeout +
// CloseWait and a few seconds. Nothing is lost: every message is in the
// destination or still parked.
func TestReplayThatGaveUpExitsPromptly(t *testing.T) {
	for _, qt := range []string{retrycore.QueueClassic, retrycore.QueueQuorum} {
		t.Run(qt, func(t *testing.T) {
			t.Parallel() // each waits the confirm timeout and a cancel never answered
			const n, confirmTimeout = 1000, 3 * time.Second
			c := newCLI(t)
			c.Env = append(c.Env, "XDG_STATE_HOME="+t.TempDir())
			ch := brokertest.Channel(t)
			q, dst := brokertest.Name(t, "dlq"), brokertest.Name(t, "dst")
			brokertest.DeclareQueue(t, ch, q, amqp.Table{"x-queue-type": qt})
			brokertest.DeclareQueue(t, ch, dst, amqp.Table{"x-queue-type": qt})
			msgs := make([]amqp.Publishing, n)
			for i := range msgs {
				msgs[i] = amqp.Publishing{MessageId: fmt.Sprintf("m-%05d", i), DeliveryMode: amqp.Persistent, Body: []byte("x"),
					Headers: amqp.Table{"x-last-error": "boom"}}
			}
			brokertest.PublishMany(t, ch, "", q, msgs)
			proxy := clustertest.NewFaultProxy(t)
			r := startDaemon(t, c, "replay", q, "--all", "--to", ":"+dst, "--yes", "--rate", "200", "--window", "64",
				"--confirm-timeout", confirmTimeout.String(), "--url", proxy.URL)
			brokertest.Eventually(t, 30*time.Second, 5*time.Millisecond,
				func() bool { return brokertest.Depth(t, ch, dst) >= 100 },
				func() string { return fmt.Sprintf("%d copies before the mute", brokertest.Depth(t, ch, dst)) })
			proxy.Mute()
			muted := time.Now()
			limit := confirmTimeout + broker.CloseWait + 5*time.Second
			select {
			case <-r.done:
			case <-time.After(2 * time.Minute):
				t.Fatalf("the replay did not exit within 2 minutes of the mute\n%s", r.log.tail(10))
			}
			exitAfter := time.Since(muted)
			code := r.cmd.ProcessState.ExitCode()
			// The broker gives back what the dropped connections held.
			brokertest.Eventually(t, 30*time.Second, 20*time.Millisecond,
				func() bool { return brokertest.Depth(t, ch, q)+brokertest.Depth(t, ch, dst) >= n },
				func() string {
					return fmt.Sprintf("%d parked + %d arrived < %d", brokertest.Depth(t, ch, q), brokertest.Depth(t, ch, dst), n)
				})
			ids := map[string]bool{}
			for _, name := range []string{q, dst} {
				for _, d := range brokertest.Drain(t, ch, name) {
					ids[d.MessageId] = true
				}
			}
			t.Logf("%s: exit %d %v after the mute (limit %v); %d of %d ids found", qt, code, exitAfter.Round(100*time.Millisecond), limit, len(ids), n)
			if code != 3 {
				t.Errorf("exit %d, want 3\n%s", code, r.log.tail(10))
			}
			if exitAfter > limit {
				t.Errorf("the replay exited %v after the mute, want within %v (--confirm-timeout, then one bounded cancel)", exitAfter.Round(100*time.Millisecond), limit)
			}
			if len(ids) != n {
				t.Errorf("%d of %d ids found in the parking lot and the destination: lost %d", len(ids), n, n-len(ids))
			}
		})
	}
}
