//go:build integration

package cli_test

import (
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker/brokertest"
	"github.com/parkinglot/parkinglot/ui/cli/clitest"
)

// TestDryRunExitsAsTheRunWould: a dry run's exit status predicts the real
// run's (ExitPartial): 3 when a message would stay parked (no such
// exchange, nothing bound, a requested id not in the queue), 0 when every
// one would be sent. Nothing moves in a dry run.
func TestDryRunExitsAsTheRunWould(t *testing.T) {
	ch := brokertest.Channel(t)
	parking, dest := brokertest.Name(t, "dlq"), brokertest.Name(t, "main")
	bound, unbound := brokertest.Name(t, "bound"), brokertest.Name(t, "unbound")
	brokertest.DeclareQueue(t, ch, parking, nil)
	brokertest.DeclareQueue(t, ch, dest, nil)
	brokertest.DeclareExchange(t, ch, bound, "direct")
	brokertest.DeclareExchange(t, ch, unbound, "direct")
	if err := ch.QueueBind(dest, "rk", bound, false, nil); err != nil {
		t.Fatalf("bind: %v", err)
	}
	for _, id := range []string{"d-1", "d-2"} {
		brokertest.Publish(t, ch, "", parking, amqp.Publishing{MessageId: id, Body: []byte(`{}`), DeliveryMode: amqp.Persistent,
			Headers: amqp.Table{"x-original-exchange": bound, "x-original-routing-key": "rk", "x-last-error": "boom"}})
	}
	brokertest.WaitDepth(t, parking, 2, 15*time.Second)
	noSuch := brokertest.Name(t, "no.such.exchange")
	c := clitest.NewCLI(t)
	for _, tc := range []struct {
		name string
		args []string
		code int
		err  string
	}{
		{"no such exchange", []string{"--all", "--to", noSuch + ":rk"}, 3, "a replay would not send 2 message(s): 2 unroutable"},
		{"nothing bound", []string{"--all", "--to", unbound + ":rk"}, 3, "2 unroutable"},
		{"an id not in the queue", []string{"--id", "d-1", "--id", "gone"}, 3, "1 not in the queue"},
		{"every one routable", []string{"--all"}, 0, ""},
	} {
		for _, out := range [][]string{nil, {"-o", "json"}} {
			args := append(append(append([]string{}, out...), "replay", parking), tc.args...)
			dry := c.Run("", append(args, "--dry-run")...)
			if dry.Code != tc.code || !strings.Contains(dry.Stderr, tc.err) {
				t.Errorf("%s %v: dry run exit %d, want %d with %q\nstdout:\n%s\nstderr:\n%s", tc.name, out, dry.Code, tc.code, tc.err, dry.Stdout, dry.Stderr)
			}
			if n := brokertest.Depth(t, ch, dest); n != 0 {
				t.Fatalf("%s: the dry run sent %d message(s)", tc.name, n)
			}
			brokertest.WaitDepth(t, parking, 2, 15*time.Second)
		}
	}
	// The real runs exit as predicted: the unroutable ones leave both
	// parked, the routable one moves both.
	for _, to := range []string{noSuch, unbound} {
		if r := c.Run("", "replay", parking, "--all", "--to", to+":rk", "--yes"); r.Code != 3 {
			t.Errorf("replay --to %s: exit %d, want 3 as its dry run said\n%s", to, r.Code, r.Stderr)
		}
		brokertest.WaitDepth(t, parking, 2, 15*time.Second)
	}
	if r := c.Run("", "replay", parking, "--all", "--yes"); r.Code != 0 {
		t.Errorf("replay --all: exit %d, want 0 as its dry run said\n%s", r.Code, r.Stderr)
	}
	brokertest.WaitDepth(t, parking, 0, 15*time.Second)
	brokertest.WaitDepth(t, dest, 2, 15*time.Second)
}
