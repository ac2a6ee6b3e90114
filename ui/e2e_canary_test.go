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

// canaryTUI opens the TUI in tmux on a parking lot of n messages whose
// config sends replays to to ("" : a fresh queue, returned as dest), and
// fills the replay dialog's canary fields.
func canaryTUI(t *testing.T, n int, to func(lot string) string, steps, wait string) (tm *tmuxSession, lot, dest string) {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Fatal("the end-to-end test needs tmux (make broker installs it): ", err)
	}
	ch := brokertest.Channel(t)
	lot, dest = brokertest.Name(t, "dlq"), brokertest.Name(t, "dest")
	brokertest.DeclareQueue(t, ch, lot, nil)
	brokertest.DeclareQueue(t, ch, dest, nil)
	for i := range n {
		brokertest.Publish(t, ch, "", lot, amqp.Publishing{MessageId: fmt.Sprintf("c-%d", i), Body: []byte(`{}`),
			Headers: amqp.Table{"x-last-error": "ledger rejects the bug"}})
	}
	brokertest.WaitDepth(t, lot, n, 30*time.Second)
	target := dest
	if to != nil {
		target = to(lot)
	}
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, "parkinglot"), 0o700); err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf("parking_lots:\n  %s:\n    to: \":%s\"\n", lot, target)
	if err := os.WriteFile(filepath.Join(home, "parkinglot", "config.yaml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "PARKINGLOT_URL="+brokertest.URL(), "PARKINGLOT_MANAGEMENT_URL="+brokertest.ManagementURL(),
		"XDG_CONFIG_HOME="+home, "XDG_STATE_HOME="+home, "NO_COLOR=1")
	tm = newTmux(t, env, 120, 40, clitest.Binary(t)+" tui "+lot)
	tm.waitFor("the browse to end", "all given back")
	tm.keys("R")
	tm.waitFor("the replay dialog", "Canary")
	tm.keys("Tab", "Tab") // destination (from the config), rate, canary
	tm.literal(steps)
	tm.keys("Tab")
	tm.literal(wait)
	tm.waitFor("the canary's fields filled", "the first N go, then the parking lot is watched")
	// Enter while the route is being resolved only says so: wait for it.
	tm.waitFor("the plan", "reaches") // the line may wrap anywhere
	tm.keys("Enter")
	return tm, lot, dest
}

// TestTUICanaryGoesOnWhenNothingCameBack: in a real terminal, a canary of
// 2 from 6 replays 2, counts the wait down, says none came back and asks;
// enter replays the rest, and none fails.
func TestTUICanaryGoesOnWhenNothingCameBack(t *testing.T) {
	tm, lot, dest := canaryTUI(t, 6, nil, "2", "3s")
	tm.waitFor("the countdown", "canary step 1: 2 replayed — waiting")
	tm.waitFor("the end of the step", "canary step 1: none of 2 came back")
	tm.waitFor("the question", "enter: replay the rest · s: stop")
	brokertest.WaitDepth(t, dest, 2, 10*time.Second)
	brokertest.WaitDepth(t, lot, 4, 10*time.Second)
	tm.keys("Enter")
	brokertest.WaitDepth(t, dest, 6, 30*time.Second)
	brokertest.WaitDepth(t, lot, 0, 30*time.Second)
	// The messages the step replayed are not "no message in queue" to
	// the rest (the dialog replays the ids chosen).
	if screen := tm.waitFor("the outcome", "replayed 6"); strings.Contains(screen, "failed") || strings.Contains(screen, "no message") {
		t.Errorf("the outcome says a message failed:\n%s", screen)
	}
}

// TestTUICanaryRampStops: steps 1,2; after the first, s stops: one
// replayed, five parked, and the dialog says the rest stay parked.
func TestTUICanaryRampStops(t *testing.T) {
	tm, lot, dest := canaryTUI(t, 6, nil, "1,2", "2s")
	tm.waitFor("the question", "enter: go on: canary step 2 (2 messages) · s: stop")
	tm.keys("s")
	tm.waitFor("the outcome", "stopped after a canary step; the rest stay parked")
	brokertest.WaitDepth(t, dest, 1, 10*time.Second)
	brokertest.WaitDepth(t, lot, 5, 10*time.Second)
}

// TestTUICanaryStopsWhenMessagesComeBack: replays sent into the parking
// lot itself come straight back; the dialog says how many and with which
// error, and nothing else is replayed.
func TestTUICanaryStopsWhenMessagesComeBack(t *testing.T) {
	tm, lot, _ := canaryTUI(t, 6, func(lot string) string { return lot }, "2", "30s")
	tm.waitFor("the outcome", "2 of 2 message(s) of canary step 1 came back")
	tm.waitFor("the groups", "2 × ledger rejects the bug")
	brokertest.WaitDepth(t, lot, 6, 10*time.Second)
}
