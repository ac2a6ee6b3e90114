//go:build integration

package cli_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker/brokertest"
)

// TestLogFormatJSON: with --log-format json the daemon (debug level, a
// handler that prints a URL with a password on stdout, a retry, a park, a
// SIGTERM) and the commands write only JSON objects on stderr, one a line,
// each with the documented keys time, level and msg; the daemon's
// records carry their documented keys (consuming: queue, url; retrying:
// id, attempt, tier, in; parked: id, kind, attempt, err; handler output:
// line); URLs are redacted and no password appears; the final error of a
// failing command is a record of level ERROR with its exit status.
func TestLogFormatJSON(t *testing.T) {
	secret := randomHex(t, 10)
	user := "pltest-logjson-" + randomHex(t, 4)
	brokertest.CreateUser(t, user, "pw-"+secret, "management", true)
	c := newCLI(t)
	c.Env = append(c.Env, "PARKINGLOT_URL="+brokertest.URLFor(user, "pw-"+secret, ""), "PARKINGLOT_MANAGEMENT_URL="+brokertest.ManagementURLFor(user, "pw-"+secret))
	p := writePipeline(t, 200*time.Millisecond)
	if code, _, stderr := c.run("--log-format", "json", "topology", "declare", "-f", p.file); code != 0 {
		t.Fatalf("topology declare: exit %d %s", code, stderr)
	}

	handler := []string{"sh", "-c", `echo "handler saw amqp://someone:hunter-` + secret + `@example:5672/"; case "$(cat)" in *poison*) exit 65;; esac; exit 1`}
	d := startDaemon(t, c, append([]string{"--log-format", "json", "--log-level", "debug", "daemon", "-f", p.file, "--metrics-addr", "127.0.0.1:0", "--exec"}, handler...)...)
	if _, err := d.log.wait(`"msg":"consuming"`, 0, 60*time.Second, d.done); err != nil {
		t.Fatalf("%v\n%s", err, d.log.tail(20))
	}
	ch := brokertest.Channel(t)
	brokertest.PublishMany(t, ch, p.Main.Exchange, p.Main.RoutingKey, []amqp.Publishing{
		{MessageId: "json-poison", Body: []byte("poison")},
		{MessageId: "json-fail", Body: []byte("fail")},
	})
	brokertest.Eventually(t, 60*time.Second, 50*time.Millisecond, func() bool { return brokertest.Depth(t, ch, p.Error.Queue) == 2 },
		func() string { return fmt.Sprintf("parked %d of 2", brokertest.Depth(t, ch, p.Error.Queue)) })
	d.stop(t)

	records := map[string][]map[string]any{}
	lines := strings.Split(strings.TrimSpace(d.log.all()), "\n")
	for _, line := range lines {
		var r map[string]any
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Errorf("a daemon stderr line is not JSON: %q", line)
			continue
		}
		for _, k := range []string{"time", "level", "msg"} {
			if _, ok := r[k].(string); !ok {
				t.Errorf("record without %s: %q", k, line)
			}
		}
		if _, err := time.Parse(time.RFC3339Nano, fmt.Sprint(r["time"])); err != nil {
			t.Errorf("time %q: %v", r["time"], err)
		}
		records[fmt.Sprint(r["msg"])] = append(records[fmt.Sprint(r["msg"])], r)
	}
	want := map[string][]string{
		"consuming":       {"queue", "url", "publish_url", "prefetch", "concurrency"},
		"serving metrics": {"addr"},
		"retrying":        {"id", "attempt", "tier", "in"},
		"parked":          {"id", "kind", "attempt", "err"},
		"handler output":  {"line"},
		"stopped: every started message finished": nil,
	}
	for msg, keys := range want {
		rs := records[msg]
		if len(rs) == 0 {
			t.Errorf("no %q record; messages: %v", msg, keysOf(records))
			continue
		}
		for _, k := range keys {
			if _, ok := rs[0][k]; !ok {
				t.Errorf("%q record without %q: %v", msg, k, rs[0])
			}
		}
	}
	if rs := records["retrying"]; len(rs) > 0 {
		if _, err := time.ParseDuration(fmt.Sprint(rs[0]["in"])); err != nil {
			t.Errorf("retrying in=%v: want duration text", rs[0]["in"])
		}
	}
	if rs := records["consuming"]; len(rs) > 0 && !strings.Contains(fmt.Sprint(rs[0]["url"]), user+":xxxxx@") {
		t.Errorf("consuming url %v: want the redacted URL", rs[0]["url"])
	}

	// A command's failure: one ERROR record with its exit status.
	code, stdout, stderr := c.run("--log-format", "json", "--url", brokertest.URLFor(user, "wrong-"+secret, ""), "queues")
	var r map[string]any
	if err := json.Unmarshal([]byte(strings.TrimSpace(stderr)), &r); err != nil || code != 1 || r["level"] != "ERROR" || r["exit"] != float64(1) ||
		!strings.Contains(fmt.Sprint(r["msg"]), "wrong username or password") {
		t.Errorf("a refused password with --log-format json: exit %d, stderr %q (%v)", code, stderr, err)
	}
	for what, text := range map[string]string{"daemon": d.log.all(), "queues": stdout + stderr} {
		if strings.Contains(text, secret) {
			t.Errorf("the %s output shows a password", what)
		}
	}
}

func keysOf[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
