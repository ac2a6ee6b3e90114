//go:build integration

package cli_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker/brokertest"
	"github.com/parkinglot/parkinglot/ui/cli/clitest"
)

// TestDryRunSaysTheRateInForce: a parking lot's configured rate does not
// throttle silently: the dry run says the rate, where it comes from and
// about how long the replay takes at it; --rate says itself.
func TestDryRunSaysTheRateInForce(t *testing.T) {
	ch := brokertest.Channel(t)
	lot, dest := brokertest.Name(t, "dlq"), brokertest.Name(t, "dest")
	brokertest.DeclareQueue(t, ch, lot, nil)
	brokertest.DeclareQueue(t, ch, dest, nil)
	for i := range 20 {
		brokertest.Publish(t, ch, "", lot, amqp.Publishing{MessageId: fmt.Sprintf("r-%02d", i), Body: []byte(`{}`)})
	}
	brokertest.WaitDepth(t, lot, 20, 30*time.Second)
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf("parking_lots:\n  %s:\n    rate: 2\n", lot)), 0o600); err != nil {
		t.Fatal(err)
	}
	c := clitest.NewCLI(t)
	r := c.Run("", "--config", cfg, "replay", lot, "--all", "--to", ":"+dest, "--dry-run")
	want := "rate: at most 2 message(s)/s (from the config, parking_lots." + lot + ".rate): about 10s for 20 message(s)"
	if r.Code != 0 || !strings.Contains(r.Stdout, want) {
		t.Errorf("dry run with a configured rate: exit %d, want the line %q in\n%s%s", r.Code, want, r.Stdout, r.Stderr)
	}
	r = c.Run("", "--config", cfg, "replay", lot, "--all", "--to", ":"+dest, "--dry-run", "--rate", "100")
	if want := "rate: at most 100 message(s)/s (--rate): under a second for 20 message(s)"; r.Code != 0 || !strings.Contains(r.Stdout, want) {
		t.Errorf("dry run with --rate: exit %d, want %q in\n%s%s", r.Code, want, r.Stdout, r.Stderr)
	}
	brokertest.WaitDepth(t, lot, 20, 30*time.Second)
}
