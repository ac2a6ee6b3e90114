//go:build integration

package ui

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker/brokertest"
	"github.com/parkinglot/parkinglot/ui/cli/clitest"
)

// jobsTUI opens, in a real terminal on a vhost of its own, a parking lot
// of n messages whose config replays it at rate/s to a queue of its own,
// beside another parking lot of 3 older messages; it starts the replay
// and sends it to the background with b.
func jobsTUI(t *testing.T, n int, rate int) (tm *tmuxSession, ch *amqp.Channel, lot, dest, other string) {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Fatal("the end-to-end test needs tmux (make broker installs it): ", err)
	}
	vurl, ch := brokertest.VhostChannel(t)
	lot, other, dest = brokertest.Name(t, "dlq"), brokertest.Name(t, "other.dlq"), brokertest.Name(t, "dest")
	for _, q := range []string{lot, other, dest} {
		if _, err := ch.QueueDeclare(q, true, false, false, false, nil); err != nil {
			t.Fatal(err)
		}
	}
	msgs := make([]amqp.Publishing, n)
	for i := range msgs {
		msgs[i] = amqp.Publishing{MessageId: fmt.Sprintf("j-%05d", i), Body: []byte(`{}`), DeliveryMode: amqp.Persistent,
			Headers: amqp.Table{"x-last-error": "ledger down"}}
	}
	brokertest.PublishMany(t, ch, "", lot, msgs)
	old := time.Now().Add(-2 * time.Hour).Truncate(time.Second) // first on the queues screen
	for i := range 3 {
		brokertest.Publish(t, ch, "", other, amqp.Publishing{MessageId: fmt.Sprintf("o-%d", i), Body: []byte(`{}`),
			Headers: amqp.Table{"x-last-error": "other trouble", "x-parked-at": old}})
	}
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, "parkinglot"), 0o700); err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf("parking_lots:\n  %s:\n    to: \":%s\"\n    rate: %d\n", lot, dest, rate)
	if err := os.WriteFile(filepath.Join(home, "parkinglot", "config.yaml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "PARKINGLOT_URL="+vurl, "PARKINGLOT_MANAGEMENT_URL="+brokertest.ManagementURL(),
		"XDG_CONFIG_HOME="+home, "XDG_STATE_HOME="+home, "NO_COLOR=1")
	tm = newTmux(t, env, 160, 40, clitest.Binary(t)+" tui "+lot)
	tm.waitFor("every message listed", fmt.Sprintf("%d messages", n))
	tm.waitFor("the browse to end", "all given back")
	tm.keys("R")
	tm.waitFor("the dialog for all of them", fmt.Sprintf("Replay %d message(s)", n))
	tm.waitFor("the plan", "reaches") // the line may wrap anywhere
	tm.keys("Enter")
	tm.waitFor("the replay under way", fmt.Sprintf("/%d", n))
	tm.keys("b")
	tm.waitFor("the job in the background", "goes on in the background")
	return tm, ch, lot, dest, other
}

// everyMessageOnce waits until the parking lot and the destination hold
// the n messages between them: each replayed or still parked, none lost,
// none twice.
func everyMessageOnce(t *testing.T, ch *amqp.Channel, lot, dest string, n int) (replayed int) {
	t.Helper()
	var parked int
	brokertest.Eventually(t, 20*time.Second, 50*time.Millisecond, func() bool {
		parked, replayed = depth(t, ch, lot), depth(t, ch, dest)
		return parked+replayed == n
	}, func() string {
		return fmt.Sprintf("%d parked + %d replayed, want %d in all", parked, replayed, n)
	})
	return replayed
}

// TestTUIJobGoesOnWhileBrowsingAndIsCancelled: in a real terminal, a
// replay of 5,000 at 50/s goes to the background; the person opens another
// parking lot and a message of it; the status bar follows the job; c on
// the jobs screen cancels it, and every message is replayed or parked.
func TestTUIJobGoesOnWhileBrowsingAndIsCancelled(t *testing.T) {
	const n = 5000
	tm, ch, lot, dest, other := jobsTUI(t, n, 50)
	tm.keys("Escape")
	tm.waitGone("the parking lot's list", "all given back")
	tm.waitFor("the queues screen", other)
	// The other parking lot is the one whose row says 2h0m (its message's
	// age; the job's parking lot is not read, its depth only).
	tm.waitFor("the other parking lot's age", "2h0m")
	// esc left the cursor on the job's parking lot; the rows may reorder
	// as the depths refresh: move towards the row each time.
	brokertest.Eventually(t, 20*time.Second, 100*time.Millisecond, func() bool {
		cursor, target := -1, -1
		for i, l := range strings.Split(tm.capture(), "\n") {
			if strings.Contains(l, "▸") {
				cursor = i
			}
			if strings.Contains(l, "2h0m") {
				target = i
			}
		}
		switch {
		case cursor >= 0 && cursor == target:
			return true
		case cursor > target:
			tm.keys("Up")
		default:
			tm.keys("Down")
		}
		return false
	}, func() string { return "the cursor never reached the other parking lot:\n" + tm.capture() })
	tm.keys("Enter")
	tm.waitFor("the other parking lot's list", "3 messages")
	tm.waitFor("its browse to end", "all given back")
	tm.keys("Enter")
	tm.waitFor("a message of it", "other trouble")
	tm.waitFor("the job in the status bar", "job: replay ")
	if replayed := depth(t, ch, dest); replayed == 0 || replayed >= n {
		t.Fatalf("%d replayed while browsing, want some and not all", replayed)
	}
	tm.keys("J")
	tm.waitFor("the jobs screen", "▸ replay "+lot)
	tm.keys("c")
	tm.waitFor("the cancelled job's result", "cancelled: replayed")
	if got := everyMessageOnce(t, ch, lot, dest, n); got == n {
		t.Fatal("the job replayed everything: the cancel came too late to prove anything")
	}
	waitDepth(t, ch, other, 3, other+" (browsed, not touched)")
}

// TestTUIQuitWithAJobAsksFirst: q with a job running asks; n stays and
// the job goes on; q then y stops it and quits, with the job's summary on
// the terminal; every message is replayed or parked.
func TestTUIQuitWithAJobAsksFirst(t *testing.T) {
	const n = 2000
	tm, ch, lot, dest, _ := jobsTUI(t, n, 20)
	tm.keys("q")
	tm.waitFor("the question", "y: quit and stop them")
	tm.keys("n")
	tm.waitGone("the question", "y: quit and stop them")
	before := depth(t, ch, dest)
	brokertest.Eventually(t, 10*time.Second, 50*time.Millisecond, func() bool { return depth(t, ch, dest) > before },
		func() string { return "the job did not go on after n" })
	tm.keys("q")
	tm.waitFor("the question again", "y: quit and stop them")
	tm.keys("y")
	tm.waitFor("the exit", "EXITED:0")
	tm.waitFor("the job's summary", "parkinglot: job: "+lot+": cancelled: replayed")
	if got := everyMessageOnce(t, ch, lot, dest, n); got == n {
		t.Fatal("the job replayed everything: the quit came too late to prove anything")
	}
}
