//go:build integration

package alerting_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
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

// start runs a process for the rest of the test, its output kept for the
// failure message, and kills it at the end.
func start(t *testing.T, name string, cmd *exec.Cmd) *strings.Builder {
	t.Helper()
	var out strings.Builder
	w := &lockedWriter{b: &out}
	cmd.Stdout, cmd.Stderr = w, w
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("%s output (last 3 KiB):\n%s", name, tail(w.String(), 3<<10))
		}
	})
	return &out
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

// webhookAlert is what Alertmanager posts to a webhook, per alert.
type webhookAlert struct {
	Status      string            `json:"status"`
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
}

// TestAlertFiresAndResolvesThroughPrometheusAndAlertmanager: a real
// Prometheus scrapes a real parkinglot watch and evaluates the rules
// alert-rules prints; a real Alertmanager posts to the test's webhook. A
// parked message fires ParkingLotNotEmpty with the queue and its error
// group, and ParkingLotNewErrorGroup from the group's oldest parked time;
// replaying it resolves both.
func TestAlertFiresAndResolvesThroughPrometheusAndAlertmanager(t *testing.T) {
	prometheus := tool(t, "PARKINGLOT_PROMETHEUS", "/usr/bin/prometheus")
	alertmanager := tool(t, "PARKINGLOT_ALERTMANAGER", "/usr/bin/prometheus-alertmanager")
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)

	ch := brokertest.Channel(t)
	lot := brokertest.Name(t, "dlq")
	dest := brokertest.Name(t, "dest")
	brokertest.DeclareQueue(t, ch, lot, nil)
	brokertest.DeclareQueue(t, ch, dest, nil)
	brokertest.Publish(t, ch, "", lot, amqp.Publishing{MessageId: "pay-1", Body: []byte(`{}`), DeliveryMode: amqp.Persistent,
		Headers: amqp.Table{"x-last-error": "upstream ledger unavailable: 503", "x-parked-at": time.Now().Truncate(time.Second)}})
	brokertest.WaitDepth(t, lot, 1, 30*time.Second)

	// the webhook receiver
	alerts := make(chan webhookAlert, 64)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Alerts []webhookAlert `json:"alerts"`
		}
		b, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(b, &body); err != nil {
			t.Errorf("webhook body %q: %v", b, err)
		}
		for _, a := range body.Alerts {
			select {
			case alerts <- a:
			default:
			}
		}
	}))
	t.Cleanup(hook.Close)

	dir := t.TempDir()
	c := clitest.NewCLI(t)
	watchPort, promPort, amPort := brokertest.FreePort(t), brokertest.FreePort(t), brokertest.FreePort(t)
	start(t, "parkinglot watch", c.Command(ctx, "watch", lot, "--no-discover", "--listen", fmt.Sprintf("127.0.0.1:%d", watchPort),
		"--interval", "1s", "--scan-interval", "1s"))
	metrics := fmt.Sprintf("http://127.0.0.1:%d/metrics", watchPort)
	brokertest.Eventually(t, 60*time.Second, 200*time.Millisecond, func() bool {
		return strings.Contains(get(metrics), `parkinglot_parked_messages_by_error{error_group="upstream ledger unavailable: <n>",queue="`+lot+`"`)
	}, func() string { return "the watch never exported the parking lot's error group:\n" + get(metrics) })

	r := c.Run("", "alert-rules", "--not-empty-for", "2s", "--job", "parkinglot")
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
`, hook.URL))
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

	// Each alert as the webhook last heard of it, by name.
	last := map[string]webhookAlert{}
	await := func(status string, names ...string) {
		t.Helper()
		deadline := time.After(2 * time.Minute)
		for {
			all := true
			for _, n := range names {
				all = all && last[n].Status == status
			}
			if all {
				return
			}
			select {
			case a := <-alerts:
				if a.Labels["queue"] == lot {
					last[a.Labels["alertname"]] = a
				}
			case <-deadline:
				t.Fatalf("not every one of %v for %s reached the webhook %s within 2 minutes: %v", names, lot, status, last)
			}
		}
	}
	await("firing", "ParkingLotNotEmpty", "ParkingLotNewErrorGroup")
	fired := last["ParkingLotNotEmpty"]
	if got := fired.Annotations["top_error_group"]; got != "upstream ledger unavailable: <n>" {
		t.Errorf("top error group %q, want the parking lot's normalised error", got)
	}
	if fired.Labels["vhost"] == "" || fired.Annotations["command"] != "parkinglot --vhost "+fired.Labels["vhost"]+" tui "+lot {
		t.Errorf("firing alert %+v: want the vhost and the command that opens it", fired)
	}
	if g := last["ParkingLotNewErrorGroup"].Labels["error_group"]; g != "upstream ledger unavailable: <n>" {
		t.Errorf("new error group %q, want the parking lot's normalised error", g)
	}

	if r := c.Run("", "replay", lot, "--all", "--to", ":"+dest, "--yes"); r.Code != 0 {
		t.Fatalf("replay: exit %d %s", r.Code, r.Stderr)
	}
	await("resolved", "ParkingLotNotEmpty", "ParkingLotNewErrorGroup")
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
