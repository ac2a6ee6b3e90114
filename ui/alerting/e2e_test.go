//go:build integration

package alerting_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker/brokertest"
	"github.com/parkinglot/parkinglot/replay/watch"
	"github.com/parkinglot/parkinglot/ui/cli/clitest"
)

// tool is a monitoring binary: $PARKINGLOT_<NAME> (make test sets them from
// .ci/monitoring env), else its Debian path. The test fails, never skips,
// when it is missing: make monitoring installs it.
func tool(t *testing.T, env, path string) string {
	t.Helper()
	if p := os.Getenv(env); p != "" {
		path = p
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("%s is not installed (run make monitoring): %v", path, err)
	}
	return path
}

// proc is a process the test started: its output kept for the failure
// message.
type proc struct {
	cmd  *exec.Cmd
	out  *lockedWriter
	once sync.Once
}

// stop kills the process and waits for it to be gone (its port free).
func (p *proc) stop() {
	p.once.Do(func() {
		_ = p.cmd.Process.Kill()
		_ = p.cmd.Wait()
	})
}

// start runs a process for the rest of the test (or until stopped), and
// kills it at the end.
func start(t *testing.T, name string, cmd *exec.Cmd) *proc {
	t.Helper()
	p := &proc{cmd: cmd, out: &lockedWriter{b: &strings.Builder{}}}
	cmd.Stdout, cmd.Stderr = p.out, p.out
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	t.Cleanup(func() {
		p.stop()
		if t.Failed() {
			t.Logf("%s output (last 3 KiB):\n%s", name, tail(p.out.String(), 3<<10))
		}
	})
	return p
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

func write(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestAlertFiresAndResolvesThroughPrometheusAndAlertmanager: a real
// Prometheus scrapes a real parkinglot watch and evaluates the rules
// alert-rules prints; a real Alertmanager posts to the test's webhook. A
// parked message fires ParkingLotNotEmpty with the queue and its error
// group, and ParkingLotNewErrorGroup (after its for:) from the group's
// oldest parked time. The watch is then killed: ParkingLotWatchDown pages,
// and the two alerts go on, neither resolved nor sent again, also when the
// watch returns and reads the parking lot anew (Prometheus and
// Alertmanager still hold them as active since they fired). Replaying
// the message resolves both at once.
func TestAlertFiresAndResolvesThroughPrometheusAndAlertmanager(t *testing.T) {
	prometheus := tool(t, "PARKINGLOT_PROMETHEUS", "/usr/bin/prometheus")
	alertmanager := tool(t, "PARKINGLOT_ALERTMANAGER", "/usr/bin/prometheus-alertmanager")
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)

	ch := brokertest.Channel(t)
	lot := brokertest.Name(t, "dlq")
	dest := brokertest.Name(t, "dest")
	const group = "upstream ledger unavailable: <n>"
	brokertest.DeclareQueue(t, ch, lot, nil)
	brokertest.DeclareQueue(t, ch, dest, nil)
	brokertest.Publish(t, ch, "", lot, amqp.Publishing{MessageId: "pay-1", Body: []byte(`{}`), DeliveryMode: amqp.Persistent,
		Headers: amqp.Table{"x-last-error": "upstream ledger unavailable: 503", "x-parked-at": time.Now().Truncate(time.Second)}})
	brokertest.WaitDepth(t, lot, 1, 30*time.Second)

	hook := newWebhook(t)
	dir := t.TempDir()
	c := clitest.NewCLI(t)
	watchPort, promPort, amPort := brokertest.FreePort(t), brokertest.FreePort(t), brokertest.FreePort(t)
	runWatch := func() *proc {
		return start(t, "parkinglot watch", c.Command(ctx, "watch", lot, "--no-discover", "--listen", fmt.Sprintf("127.0.0.1:%d", watchPort),
			"--interval", "1s", "--scan-interval", "1s"))
	}
	w := runWatch()
	metrics := fmt.Sprintf("http://127.0.0.1:%d/metrics", watchPort)
	brokertest.Eventually(t, 60*time.Second, 200*time.Millisecond, func() bool {
		return strings.Contains(get(metrics), `parkinglot_parked_messages_by_error{error_group="`+group+`",queue="`+lot+`"`)
	}, func() string { return "the watch never exported the parking lot's error group:\n" + get(metrics) })

	r := c.Run("", "alert-rules", "--not-empty-for", "2s", "--new-group-for", "2s", "--watch-down-for", "2s", "--job", "parkinglot")
	if r.Code != 0 {
		t.Fatalf("alert-rules: exit %d %s", r.Code, r.Stderr)
	}
	rules := write(t, dir, "rules.yml", r.Stdout)
	write(t, dir, "alertmanager.yml", fmt.Sprintf(`route:
  receiver: hook
  group_by: [alertname, queue]
  group_wait: 1s
  group_interval: 1s
  repeat_interval: 1h
receivers:
  - name: hook
    webhook_configs: [{url: %q, send_resolved: true}]
`, hook.url))
	start(t, "alertmanager", exec.CommandContext(ctx, alertmanager,
		"--config.file="+filepath.Join(dir, "alertmanager.yml"), "--storage.path="+filepath.Join(dir, "am"),
		fmt.Sprintf("--web.listen-address=127.0.0.1:%d", amPort), "--cluster.listen-address="))
	write(t, dir, "prometheus.yml", fmt.Sprintf(`global: {scrape_interval: 1s, evaluation_interval: 1s}
rule_files: [%q]
alerting:
  alertmanagers: [{static_configs: [{targets: ['127.0.0.1:%d']}]}]
scrape_configs:
  - job_name: parkinglot
    static_configs: [{targets: ['127.0.0.1:%d']}]
`, rules, amPort, watchPort))
	start(t, "prometheus", exec.CommandContext(ctx, prometheus,
		"--config.file="+filepath.Join(dir, "prometheus.yml"), "--storage.tsdb.path="+filepath.Join(dir, "tsdb"),
		fmt.Sprintf("--web.listen-address=127.0.0.1:%d", promPort), "--rules.alert.resend-delay=1s"))
	prom := promAPI(fmt.Sprintf("http://127.0.0.1:%d", promPort))
	am := fmt.Sprintf("http://127.0.0.1:%d", amPort)

	// The parking lot's two alerts: a new error is one alert per vhost
	// and error, with no queue.
	ours := func(e hookEvent) bool {
		return e.Labels["queue"] == lot && e.Labels["alertname"] == "ParkingLotNotEmpty" ||
			e.Labels["error_group"] == group && e.Labels["alertname"] == "ParkingLotNewErrorGroup"
	}
	hook.await(t, 0, "firing", "ParkingLotNotEmpty", "ParkingLotNewErrorGroup")
	fired := hook.last("ParkingLotNotEmpty")
	if got := fired.Annotations["top_error_group"]; got != group {
		t.Errorf("top error group %q, want the parking lot's normalised error", got)
	}
	if fired.Labels["vhost"] == "" || fired.Annotations["command"] != "parkinglot --vhost "+fired.Labels["vhost"]+" tui "+lot {
		t.Errorf("firing alert %+v: want the vhost and the command that opens it", fired)
	}
	if n := hook.last("ParkingLotNewErrorGroup"); n.Labels["error_group"] != group || n.Annotations["queues"] != lot ||
		n.Annotations["command"] != fired.Annotations["command"] {
		t.Errorf("new error group %+v: want the normalised error, the parking lot and the command that opens it", n)
	}
	firstPage := hook.len()
	startsAt, active, firing := map[string]time.Time{}, map[string]time.Time{}, prom.firing(t)
	for _, a := range []string{"ParkingLotNotEmpty", "ParkingLotNewErrorGroup"} {
		startsAt[a], active[a] = hook.last(a).StartsAt, firing[a]
	}

	// The watch dies: the watch-down alert pages; the parking lot's
	// alerts are neither resolved nor sent again.
	killed := time.Now()
	w.stop()
	hook.await(t, firstPage, "firing", "ParkingLotWatchDown")
	prom.assertFiringSince(t, active, "while the watch is down")

	// It returns, reads the parking lot and scans it again: Prometheus
	// evaluates the rules on what it reads, and holds the same alerts as
	// fired, so Alertmanager was told nothing new.
	back := hook.len()
	runWatch()
	hook.await(t, back, "resolved", "ParkingLotWatchDown")
	prom.awaitEvaluatedOn(t, fmt.Sprintf(`%s{queue=%q} > %d and on(job, instance) %s == 1`,
		watch.MetricLastScan, lot, killed.Unix(), watch.MetricReady))
	prom.assertFiringSince(t, active, "after the watch returned")
	awaitAlertmanagerHolds(t, am, startsAt)
	if extra := hook.since(0, ours); len(extra) != 2 {
		t.Errorf("the webhook heard of the parking lot's alerts %d times, want 2 (each fired once): %+v", len(extra), extra)
	}

	if r := c.Run("", "replay", lot, "--all", "--to", ":"+dest, "--yes"); r.Code != 0 {
		t.Fatalf("replay: exit %d %s", r.Code, r.Stderr)
	}
	hook.await(t, back, "resolved", "ParkingLotNotEmpty", "ParkingLotNewErrorGroup")
	brokertest.WaitDepth(t, dest, 1, 30*time.Second)
}

func get(url string) string {
	resp, err := http.Get(url)
	if err != nil {
		return err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}
