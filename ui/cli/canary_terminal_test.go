//go:build integration

package cli_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker/brokertest"
)

// TestCanaryCtrlCDuringTheWaitInATerminal: Ctrl-C while a canary step is
// watched ends the run at once with the one summary of every interrupted
// command (exit 130): nothing is in flight then, so the 2 canaries are at
// their destination and the other 18 still parked, none lost, none doubled.
func TestCanaryCtrlCDuringTheWaitInATerminal(t *testing.T) {
	ch := brokertest.Channel(t)
	park := brokertest.Name(t, "parking-lot")
	dest := brokertest.Name(t, "dest")
	brokertest.DeclareQueue(t, ch, park, nil)
	brokertest.DeclareQueue(t, ch, dest, nil)
	msgs := make([]amqp.Publishing, 20)
	for i := range msgs {
		msgs[i] = amqp.Publishing{MessageId: fmt.Sprintf("m%02d", i), Body: []byte(`{}`), DeliveryMode: amqp.Persistent}
	}
	brokertest.PublishMany(t, ch, "", park, msgs)
	brokertest.WaitDepth(t, park, 20, 10*time.Second)

	tm := startTerminal(t, nil, "replay", park, "--all", "--to", ":"+dest, "--canary", "2", "--canary-wait", "2m", "--yes")
	tm.waitFor("canary step 1: 2 replayed, waiting")
	start := time.Now()
	tm.send("\x03")
	code, out := tm.exit()
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("Ctrl-C took %v to end the run", took)
	}
	if code != 130 || !strings.Contains(out, "interrupted: replayed 2 message(s), 18 still parked in "+park+"; nothing lost") {
		t.Errorf("exit %d, want 130 and what was replayed; the terminal showed:\n%s", code, out)
	}
	brokertest.WaitDepth(t, dest, 2, 10*time.Second)
	brokertest.WaitDepth(t, park, 18, 10*time.Second)
}
