//go:build integration

package cli_test

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker/brokertest"
	"github.com/parkinglot/parkinglot/ui/cli/clitest"
)

// probe is one GET of the daemon's metrics listener: status and body.
func probe(base, path string) (int, string) {
	c := http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get(base + path)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// awaitExit0 waits up to 30 s for a process to exit (exited gets its
// Wait's error) and fails the test unless it exited 0; what names the
// process and the moment, for the failure.
func awaitExit0(t *testing.T, exited <-chan error, what string) {
	t.Helper()
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("%s: %v, want exit 0", what, err)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("%s: still running after 30 s", what)
	}
}

// TestDaemonProbesAndParkingLotGauges: the daemon's metrics listener
// answers /livez 200 while it runs and /readyz 200 while it consumes; it
// exports its parking lot's depth and oldest age under the watch's names;
// with its connection lost it is not ready while a handler still runs,
// and ready again once it consumes again; from the moment SIGTERM starts
// the drain (a handler still running) /readyz answers 503, /livez still
// 200, until it exits 0.
func TestDaemonProbesAndParkingLotGauges(t *testing.T) {
	gate := filepath.Join(t.TempDir(), "gate")
	script := filepath.Join(t.TempDir(), "gated.sh")
	// Poison parks at once; anything else waits for the gate file.
	if err := os.WriteFile(script, []byte(`#!/bin/sh
body=$(cat)
case "$body" in
  *poison*) echo "poison $PARKINGLOT_MESSAGE_ID" >&2; exit 65 ;;
esac
while [ ! -e "$PLTEST_GATE" ]; do sleep 0.05; done
exit 0
`), 0o755); err != nil {
		t.Fatal(err)
	}
	c := clitest.NewCLI(t, "PLTEST_GATE="+gate)
	p := writePipeline(t, 200*time.Millisecond)
	if r := c.Run("", "topology", "declare", "-f", p.file); r.Code != 0 {
		t.Fatalf("topology declare: exit %d %s", r.Code, r.Stderr)
	}

	daemon := c.Command(context.Background(), "daemon", "-f", p.file, "--metrics-addr", "127.0.0.1:0", "--watch-interval", "1s", "--exec", script)
	logs, err := daemon.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := daemon.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	addrs := make(chan string, 1)
	var rest strings.Builder
	go func() {
		sc := bufio.NewScanner(logs)
		re := regexp.MustCompile(`addr=http://([^/]+)/metrics`)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				addrs <- "http://" + m[1]
			}
			rest.WriteString(sc.Text() + "\n")
		}
		exited <- daemon.Wait() // after stderr is read to the end
	}()
	t.Cleanup(func() {
		// A handler still waiting would outlive the daemon and hold its
		// output open: the log below would never end.
		_ = os.WriteFile(gate, nil, 0o644)
		_ = daemon.Process.Kill()
		if t.Failed() {
			<-exited
			t.Logf("daemon log:\n%s", rest.String())
		}
	})
	var base string
	select {
	case base = <-addrs:
	case err := <-exited:
		t.Fatalf("the daemon exited before serving metrics: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("the daemon did not log its metrics address")
	}
	status := func(path string) func() bool {
		return func() bool { code, _ := probe(base, path); return code == http.StatusOK }
	}
	if code, body := probe(base, "/livez"); code != http.StatusOK {
		t.Errorf("/livez: %d %q, want 200", code, body)
	}
	brokertest.Eventually(t, 30*time.Second, 50*time.Millisecond, status("/readyz"),
		func() string { _, b := probe(base, "/readyz"); return "/readyz while consuming: " + b })

	ch := brokertest.Channel(t)
	brokertest.Publish(t, ch, p.Main.Exchange, p.Main.RoutingKey, amqp.Publishing{MessageId: "poison-1", Body: []byte("poison pill")})
	depth := `parkinglot_parked_messages{queue="` + p.Error.Queue + `",vhost="/"} 1` + "\n"
	age := regexp.MustCompile(`(?m)^parkinglot_oldest_parked_age_seconds\{queue="` + regexp.QuoteMeta(p.Error.Queue) + `",vhost="/"\} (\S+)$`)
	brokertest.Eventually(t, 30*time.Second, 100*time.Millisecond, func() bool {
		_, m := probe(base, "/metrics")
		return strings.Contains(m, depth)
	}, func() string {
		_, m := probe(base, "/metrics")
		return "no parked message in the daemon's metrics:\n" + m
	})
	_, m := probe(base, "/metrics")
	if a := age.FindStringSubmatch(m); a == nil {
		t.Errorf("no parkinglot_oldest_parked_age_seconds for %s", p.Error.Queue)
	} else if v, _ := strconv.ParseFloat(a[1], 64); v < 0 || v > 60 {
		t.Errorf("oldest parked age %v s, want the seconds since the poison message was parked", v)
	}
	if strings.Contains(m, "parkinglot_parked_messages_by_error") || strings.Contains(m, "parkinglot_watch_ready") {
		t.Errorf("the daemon exports the watch's other metrics; want the depth and the oldest age only")
	}

	inFlight := func(what string) {
		t.Helper()
		brokertest.Eventually(t, 30*time.Second, 50*time.Millisecond, func() bool {
			_, m := probe(base, "/metrics")
			return strings.Contains(m, "parkinglot_in_flight 1\n")
		}, func() string { return what + " is not being handled" })
	}
	brokertest.Publish(t, ch, p.Main.Exchange, p.Main.RoutingKey, amqp.Publishing{MessageId: "slow-0", Body: []byte("slow")})
	inFlight("slow-0")
	// Its connection lost, the daemon is not ready while its handler
	// still runs (the drain), then ready again once it consumes again.
	mgmt := brokertest.Management(t)
	brokertest.Eventually(t, 30*time.Second, 200*time.Millisecond,
		func() bool { return brokertest.CloseConnections(t, mgmt, "parkinglot daemon "+p.Name) > 0 },
		func() string { return "no daemon connection to close" })
	// Well within the handler timeout (10s), which would end the drain.
	brokertest.Eventually(t, 3*time.Second, 20*time.Millisecond, func() bool {
		code, _ := probe(base, "/readyz")
		return code == http.StatusServiceUnavailable
	}, func() string {
		_, b := probe(base, "/readyz")
		return "/readyz with the connection lost, draining: " + b
	})
	if _, m := probe(base, "/metrics"); !strings.Contains(m, "parkinglot_in_flight 1\n") {
		t.Error("the handler no longer runs: readiness was not seen during the drain")
	}
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	brokertest.Eventually(t, 60*time.Second, 50*time.Millisecond, status("/readyz"),
		func() string { _, b := probe(base, "/readyz"); return "/readyz after the reconnect: " + b })
	// slow-0, given back with the connection, is done: out of the queue
	// and out of the handler (an empty queue alone is also what its
	// redelivery looks like while the handler runs, and a handler still
	// running when the gate goes would hold slow-1's place).
	brokertest.WaitDepth(t, p.Main.Queue, 0, 30*time.Second)
	brokertest.Eventually(t, 30*time.Second, 50*time.Millisecond, func() bool {
		_, m := probe(base, "/metrics")
		return strings.Contains(m, "parkinglot_in_flight 0\n")
	}, func() string { return "slow-0 is still being handled" })
	if err := os.Remove(gate); err != nil {
		t.Fatal(err)
	}

	brokertest.Publish(t, ch, p.Main.Exchange, p.Main.RoutingKey, amqp.Publishing{MessageId: "slow-1", Body: []byte("slow")})
	inFlight("slow-1")

	if err := daemon.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	brokertest.Eventually(t, 10*time.Second, 20*time.Millisecond, func() bool {
		code, _ := probe(base, "/readyz")
		return code == http.StatusServiceUnavailable
	}, func() string { _, b := probe(base, "/readyz"); return "/readyz after SIGTERM: " + b })
	select {
	case err := <-exited:
		t.Fatalf("the daemon exited (%v) while its handler still ran", err)
	default:
	}
	if code, body := probe(base, "/livez"); code != http.StatusOK {
		t.Errorf("/livez while draining: %d %q, want 200", code, body)
	}
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	awaitExit0(t, exited, "the daemon after its handler finished")
	exited <- nil // for the cleanup's log
	if n := brokertest.Depth(t, ch, p.Main.Queue); n != 0 {
		t.Errorf("%d messages left in the main queue, want the slow one done", n)
	}
}
