//go:build integration

package ui

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker/brokertest"
	"github.com/parkinglot/parkinglot/ui/cli/clitest"
)

// TestTUIReplayHonoursTheConfiguredRate: in a real terminal, the replay
// dialog of a parking lot whose config says `rate: 1` shows that rate and
// where it comes from, and a replay of 4 messages takes at least 3 s, as
// the CLI's does; a bad broker-side filter's red line is gone after esc.
func TestTUIReplayHonoursTheConfiguredRate(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Fatal("the end-to-end test needs tmux (make broker installs it): ", err)
	}
	ch := brokertest.Channel(t)
	lot, dest := brokertest.Name(t, "dlq"), brokertest.Name(t, "dest")
	brokertest.DeclareQueue(t, ch, lot, nil)
	brokertest.DeclareQueue(t, ch, dest, nil)
	for i := range 4 {
		brokertest.Publish(t, ch, "", lot, amqp.Publishing{MessageId: fmt.Sprintf("r-%d", i), Body: []byte(`{}`),
			Headers: amqp.Table{"x-last-error": "boom"}})
	}
	brokertest.WaitDepth(t, lot, 4, 30*time.Second)
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, "parkinglot"), 0o700); err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf("parking_lots:\n  %s:\n    to: \":%s\"\n    rate: 1\n", lot, dest)
	if err := os.WriteFile(filepath.Join(home, "parkinglot", "config.yaml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "PARKINGLOT_URL="+brokertest.URL(), "PARKINGLOT_MANAGEMENT_URL="+brokertest.ManagementURL(),
		"XDG_CONFIG_HOME="+home, "XDG_STATE_HOME="+home, "NO_COLOR=1")
	tm := newTmux(t, env, 120, 40, clitest.Binary(t)+" tui "+lot)
	tm.waitFor("the browse to end", "all given back")

	tm.keys("/")
	tm.literal("=error contains")
	tm.keys("Enter")
	tm.waitFor("the bad filter's error", "✗")
	tm.keys("Escape")
	// The next key waits for esc to be read: esc and a key read at once
	// are alt+key.
	tm.waitGone("the bad filter's error line after esc", "✗")
	tm.waitFor("the list again", "all given back")

	tm.keys("R")
	tm.waitFor("the configured rate", "from the config (parking_lots: rate)")
	// Enter while the route is being resolved only says so: wait for it.
	tm.waitFor("the plan", "reaches") // the line may wrap anywhere
	start := time.Now()
	tm.keys("Enter")
	brokertest.WaitDepth(t, dest, 4, 60*time.Second)
	if took := time.Since(start); took < 3*time.Second {
		t.Errorf("4 messages at the configured rate 1/s took %s, want at least 3 s", took)
	}
	brokertest.WaitDepth(t, lot, 0, 30*time.Second)
}
