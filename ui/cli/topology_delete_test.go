//go:build integration

package cli_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker/brokertest"
	"github.com/parkinglot/parkinglot/ui/cli/clitest"
)

// TestTopologyDeleteKeepsWhatHoldsMessages: a quorum pipeline whose delays
// changed (1s, 5s, then 1s, 2s: the 5s delay queue left behind) and whose
// parking lot holds a message. `topology delete` without a terminal and
// --yes changes nothing (exit 2); with --yes it deletes the main queue and
// every delay queue, the old one too, keeps the parking lot and the error
// exchange bound to it (exit 3, saying so); with --force it discards the
// message and deletes the rest (exit 0).
func TestTopologyDeleteKeepsWhatHoldsMessages(t *testing.T) {
	name := brokertest.Name(t, "pipe")
	file := func(delays string) string {
		path := filepath.Join(t.TempDir(), "pipeline.yaml")
		yaml := fmt.Sprintf(`name: %[1]s
queue_type: quorum
main: {exchange: %[1]s.main, queue: %[1]s.main.queue, routing_key: work}
retry: {exchange: %[1]s.retry, routing_key: retry, delays: [%[2]s]}
error: {exchange: %[1]s.error, queue: %[1]s.error.dlq, routing_key: error}
`, name, delays)
		if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	old, now := file("1s, 5s"), file("1s, 2s")
	cl := clitest.NewCLI(t)
	for _, f := range []string{old, now} {
		if r := cl.Run("", "topology", "declare", "-f", f); r.Code != 0 {
			t.Fatalf("declare: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
		}
	}
	ch := brokertest.Channel(t)
	lot := name + ".error.dlq"
	brokertest.Publish(t, ch, name+".error", "error", amqp.Publishing{MessageId: "parked-1", Body: []byte("{}"), DeliveryMode: amqp.Persistent})
	brokertest.WaitDepth(t, lot, 1, 0)
	queues := []string{name + ".main.queue", name + ".retry.1s", name + ".retry.2s", name + ".retry.5s", lot}
	exists := func(q string) bool { return brokertest.QueueExists(t, q) }

	r := cl.Run("", "topology", "delete", "-f", now)
	if r.Code != 2 || !strings.Contains(r.Stdout, name+".retry.5s (old delay 5s)") {
		t.Errorf("without --yes: exit %d, plan %q; want 2 and the old delay queue in the plan", r.Code, r.Stdout)
	}
	for _, q := range queues {
		if !exists(q) {
			t.Fatalf("%s deleted without --yes", q)
		}
	}

	r = cl.Run("", "topology", "delete", "-f", now, "--yes")
	if r.Code != 3 || !strings.Contains(r.Stdout, "kept") {
		t.Errorf("--yes: exit %d\n%s%s; want 3 saying what was kept", r.Code, r.Stdout, r.Stderr)
	}
	for _, q := range queues[:4] {
		if exists(q) {
			t.Errorf("%s still there after --yes", q)
		}
	}
	if !exists(lot) || brokertest.Depth(t, ch, lot) != 1 {
		t.Errorf("the parking lot and its message must stay without --force")
	}

	r = cl.Run("", "topology", "delete", "-f", now, "--yes", "--force")
	if r.Code != 0 || !strings.Contains(r.Stdout, "1 message(s) discarded") {
		t.Errorf("--force: exit %d\n%s%s; want 0 saying the message was discarded", r.Code, r.Stdout, r.Stderr)
	}
	if exists(lot) {
		t.Errorf("%s still there after --force", lot)
	}
	for _, ex := range []string{name + ".main", name + ".retry", name + ".error"} {
		if brokertest.ExchangeExists(t, ex) {
			t.Errorf("exchange %s still there", ex)
		}
	}
}
