//go:build integration

package cli_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker/brokertest"
	"github.com/parkinglot/parkinglot/ui/cli/clitest"
)

// TestWatchProcessServesThenStopsOnSIGTERM: `parkinglot watch` as it runs
// under systemd or in a pod. It answers /livez, then /readyz once it has
// read the broker, exports the parking lot's depth, leaves the parked
// messages where they are, and exits 0 on SIGTERM.
func TestWatchProcessServesThenStopsOnSIGTERM(t *testing.T) {
	ch := brokertest.Channel(t)
	lot := brokertest.Name(t, "dlq")
	brokertest.DeclareQueue(t, ch, lot, nil)
	for i := range 3 {
		brokertest.Publish(t, ch, "", lot, amqp.Publishing{MessageId: fmt.Sprintf("w-%d", i), Body: []byte(`{}`),
			DeliveryMode: amqp.Persistent, Headers: amqp.Table{"x-last-error": "ledger timeout"}})
	}
	brokertest.WaitDepth(t, lot, 3, 30*time.Second)

	base := fmt.Sprintf("http://127.0.0.1:%d", brokertest.FreePort(t))
	c := clitest.NewCLI(t)
	watch := c.Command(context.Background(), "watch", lot, "--no-discover", "--listen", strings.TrimPrefix(base, "http://"),
		"--interval", "1s", "--scan-interval", "1s")
	var logs syncBuffer
	watch.Stderr = &logs
	if err := watch.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- watch.Wait() }()
	t.Cleanup(func() {
		_ = watch.Process.Kill()
		if t.Failed() {
			t.Logf("watch log:\n%s", logs.String())
		}
	})

	ok := func(path string) func() bool {
		return func() bool { code, _ := probe(base, path); return code == http.StatusOK }
	}
	brokertest.Eventually(t, 30*time.Second, 50*time.Millisecond, ok("/livez"),
		func() string { return "/livez never answered 200: " + logs.String() })
	brokertest.Eventually(t, 30*time.Second, 50*time.Millisecond, ok("/readyz"),
		func() string { _, b := probe(base, "/readyz"); return "/readyz never answered 200: " + b })
	depth := `parkinglot_parked_messages{queue="` + lot + `",vhost="/"} 3` + "\n"
	group := `parkinglot_parked_messages_by_error{error_group="ledger timeout",queue="` + lot + `",vhost="/"} 3` + "\n"
	brokertest.Eventually(t, 30*time.Second, 100*time.Millisecond, func() bool {
		_, m := probe(base, "/metrics")
		return strings.Contains(m, depth) && strings.Contains(m, group)
	}, func() string {
		_, m := probe(base, "/metrics")
		return "the depth and the error group are not exported:\n" + m
	})

	if err := watch.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	awaitExit0(t, exited, "the watch after SIGTERM")
	if code, _ := probe(base, "/livez"); code != 0 {
		t.Errorf("/livez answers %d after the watch exited", code)
	}
	if d := brokertest.Depth(t, ch, lot); d != 3 {
		t.Errorf("the parking lot holds %d after the watch, want the 3 it held", d)
	}
}
