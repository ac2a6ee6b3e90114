package clustertest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/broker/brokertest"
)

// Rabbitmqctl runs `rabbitmqctl ARGS…` on the test broker's node, bounded
// by timeout, and returns its combined output. $PARKINGLOT_RABBITMQCTL
// names the command for the node under test (`.ci/brokers env NAME` sets
// it for the RabbitMQ 4.x nodes, which run in their own root folders);
// without it, the system's rabbitmqctl and its default node.
func Rabbitmqctl(t testing.TB, timeout time.Duration, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	ctl := os.Getenv("PARKINGLOT_RABBITMQCTL")
	if ctl == "" {
		ctl = "rabbitmqctl"
	}
	out, err := exec.CommandContext(ctx, ctl, args...).CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("rabbitmqctl %s: %w: %s", strings.Join(args, " "), err, bytes.TrimSpace(out))
	}
	return string(out), nil
}

// BrokerTempDir is a folder, removed when the test ends, whose files the
// broker's node can read, and the same folder's path as the node sees it.
// A node of make brokers runs in its own root folder
// ($PARKINGLOT_BROKER_ROOT, set by `.ci/brokers env NAME`): the folder is
// made under that root's /tmp.
func BrokerTempDir(t testing.TB) (host, seenByBroker string) {
	t.Helper()
	root := os.Getenv("PARKINGLOT_BROKER_ROOT")
	host, err := os.MkdirTemp(filepath.Join(root, os.TempDir()), "parkinglot-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(host) })
	// MkdirTemp makes it 0700 and root's: the broker runs as its own user.
	if err := os.Chmod(host, 0o755); err != nil {
		t.Fatal(err)
	}
	return host, strings.TrimPrefix(host, root)
}

// WaitBrokerUp polls until the broker accepts an AMQP connection and the
// management API answers, or timeout passes.
func WaitBrokerUp(t testing.TB, timeout time.Duration) error {
	t.Helper()
	deadline := time.Now().Add(timeout)
	m, err := broker.NewManagement(brokertest.ManagementURL(), "/")
	if err != nil {
		return err
	}
	defer m.Close()
	var last error
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		c, err := broker.Dial(ctx, broker.Options{URL: brokertest.URL(), Name: "parkinglot-test wait " + t.Name()})
		if err == nil {
			_ = c.Close()
			_, err = m.Overview(ctx)
		}
		cancel()
		if err == nil {
			return nil
		}
		last = err
		time.Sleep(200 * time.Millisecond) // polling the broker with a deadline
	}
	return fmt.Errorf("the broker did not answer AMQP and the management API within %v: %v", timeout, last)
}

// StartAppAtEnd makes sure the broker's app is running when the test ends,
// whatever the test did to it (`rabbitmqctl start_app` is a no-op on a
// running node). Register it before stopping the app.
func StartAppAtEnd(t testing.TB) {
	t.Helper()
	t.Cleanup(func() {
		if out, err := Rabbitmqctl(t, 2*time.Minute, "start_app"); err != nil {
			t.Errorf("clean-up: %v (%s)", err, out)
		}
		if err := WaitBrokerUp(t, 2*time.Minute); err != nil {
			t.Errorf("clean-up: %v", err)
		}
	})
}

// RestartApp stops and starts the broker's app (`rabbitmqctl stop_app` /
// `start_app`: every connection drops, durable queues recover) and waits,
// bounded, until AMQP and the management API answer again. It returns how
// long the broker was away.
func RestartApp(t testing.TB) time.Duration {
	t.Helper()
	StartAppAtEnd(t)
	start := time.Now()
	if out, err := Rabbitmqctl(t, 2*time.Minute, "stop_app"); err != nil {
		t.Fatalf("%v (%s)", err, out)
	}
	if out, err := Rabbitmqctl(t, 2*time.Minute, "start_app"); err != nil {
		t.Fatalf("%v (%s)", err, out)
	}
	if err := WaitBrokerUp(t, 2*time.Minute); err != nil {
		t.Fatal(err)
	}
	return time.Since(start)
}

// MemoryAlarm raises the broker's memory alarm (a vm_memory_high_watermark
// far below what the node uses: every publishing connection is blocked) and
// returns a function that restores the watermark the node had; the test's
// clean-up restores it too. It disturbs every test publishing meanwhile:
// use it only in chaos-tagged tests, which run alone.
func MemoryAlarm(t testing.TB) (clear func()) {
	t.Helper()
	out, err := Rabbitmqctl(t, 30*time.Second, "eval", "vm_memory_monitor:get_vm_memory_high_watermark().")
	if err != nil {
		t.Fatal(err)
	}
	restore := []string{"set_vm_memory_high_watermark"}
	was := strings.TrimSpace(out)
	if abs, ok := strings.CutPrefix(was, "{absolute,"); ok {
		restore = append(restore, "absolute", strings.TrimSuffix(abs, "}"))
	} else {
		restore = append(restore, was)
	}
	done := false
	clear = func() {
		if done {
			return
		}
		done = true
		if out, err := Rabbitmqctl(t, 30*time.Second, restore...); err != nil {
			t.Errorf("restore the memory watermark (%s): %v %s", strings.Join(restore, " "), err, out)
		}
	}
	t.Cleanup(clear)
	if out, err := Rabbitmqctl(t, 30*time.Second, "set_vm_memory_high_watermark", "0.0000001"); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	return clear
}
