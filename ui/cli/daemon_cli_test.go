//go:build integration

package cli_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker/brokertest"
	"github.com/parkinglot/parkinglot/retrycore"
	"github.com/parkinglot/parkinglot/retrycore/retrytest"
	"github.com/parkinglot/parkinglot/ui/cli/clitest"
)

// cli runs the binary with the test broker's URLs and an empty config.
type cli struct {
	*clitest.CLI
	t *testing.T
}

func newCLI(t *testing.T) *cli {
	c := &cli{CLI: clitest.NewCLI(t), t: t}
	c.Timeout = 60 * time.Second
	return c
}

// command is the binary with args, for a test that starts it itself.
func (c *cli) command(args ...string) *exec.Cmd {
	return c.Command(context.Background(), args...)
}

// run runs a command to completion and returns its exit code and output.
func (c *cli) run(args ...string) (int, string, string) {
	c.t.Helper()
	r := c.Run("", args...)
	return r.Code, r.Stdout, r.Stderr
}

func TestDaemonCLI(t *testing.T) {
	c := newCLI(t)

	t.Run("usage errors exit 2", func(t *testing.T) {
		for _, args := range [][]string{
			{"daemon", "-f", "p.yaml"},
			{"daemon", "-f", "p.yaml", "--exec"},
			{"daemon", "-f", "p.yaml", "--http", "http://localhost/", "--exec", "true"},
			{"daemon", "-f", "p.yaml", "./handler.sh"},
			{"daemon", "--exec", "true"},
			{"topology", "declare"},
		} {
			code, _, stderr := c.run(args...)
			if code != 2 || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
				t.Errorf("%v: exit %d, stderr %q; want exit 2 and one line", args, code, stderr)
			}
		}
	})

	t.Run("daemon flags after exec are refused and before it work", func(t *testing.T) {
		p := writePipeline(t, 200*time.Millisecond)
		for _, args := range [][]string{
			{"daemon", "-f", p.file, "--exec", "true", "--metrics-addr", "127.0.0.1:0"},
			{"daemon", "--exec", "true", "-f", p.file},
			{"daemon", "-f", p.file, "--exec", "true", "--log-level", "debug"},
		} {
			code, stdout, stderr := c.run(args...)
			if code != 2 || strings.Count(strings.TrimSpace(stderr), "\n") != 0 || stdout != "" ||
				!strings.Contains(stderr, "after --exec is passed to the handler; put daemon flags before --exec, or use --exec -- CMD… to pass it on") {
				t.Errorf("%v: exit %d, stderr %q; want exit 2 and the one line", args, code, stderr)
			}
		}
		if r := c.Run("", "topology", "declare", "-f", p.file); r.Code != 0 {
			t.Fatalf("topology declare: exit %d %s", r.Code, r.Stderr)
		}
		// The order the usage line shows.
		d := c.command("daemon", "-f", p.file, "--metrics-addr", "127.0.0.1:0", "--exec", "true")
		logs, err := d.StderrPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := d.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = d.Process.Kill(); _ = d.Wait() })
		addr := make(chan string, 1)
		go func() {
			sc := bufio.NewScanner(logs)
			re := regexp.MustCompile(`addr=http://([^/\s]+)/metrics`)
			for sc.Scan() {
				if m := re.FindStringSubmatch(sc.Text()); m != nil {
					addr <- m[1]
				}
			}
		}()
		select {
		case a := <-addr:
			resp, err := (&http.Client{Timeout: 5 * time.Second}).Get("http://" + a + "/metrics")
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 || !strings.Contains(string(body), "parkinglot_") {
				t.Errorf("/metrics: %d %.200s", resp.StatusCode, body)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("the daemon never served metrics")
		}
		_ = d.Process.Signal(syscall.SIGTERM)
	})

	t.Run("a busy metrics address is one line naming the flag", func(t *testing.T) {
		p := writePipeline(t, 200*time.Millisecond)
		busy, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer busy.Close()
		a := busy.Addr().String()
		code, stdout, stderr := c.run("daemon", "-f", p.file, "--metrics-addr", a, "--exec", "true")
		line := strings.TrimSpace(stderr)
		if code != 1 || stdout != "" || strings.Count(line, "\n") != 0 ||
			!strings.Contains(line, "--metrics-addr "+a+": ") || !strings.Contains(line, "address already in use") {
			t.Errorf("exit %d, stderr %q; want exit 1 and one line: --metrics-addr %s: … address already in use", code, stderr, a)
		}
	})

	t.Run("a refused password is one line and no retry loop", func(t *testing.T) {
		p := writePipeline(t, 200*time.Millisecond)
		start := time.Now()
		code, _, stderr := c.run("--url", "amqp://guest:wrong@127.0.0.1:5672/", "daemon", "-f", p.file, "--exec", "true")
		if code != 1 || !strings.Contains(stderr, "wrong username or password") || strings.Contains(stderr, ":wrong@") ||
			strings.Count(strings.TrimSpace(stderr), "\n") != 0 || time.Since(start) > 20*time.Second {
			t.Fatalf("exit %d after %v, stderr %q", code, time.Since(start), stderr)
		}
	})

	t.Run("a missing handler fails at start-up", func(t *testing.T) {
		p := writePipeline(t, 200*time.Millisecond)
		code, _, stderr := c.run("daemon", "-f", p.file, "--exec", "/nonexistent/handler.sh")
		if code != 1 || !strings.Contains(stderr, `exec handler "/nonexistent/handler.sh": no such file`) {
			t.Fatalf("exit %d, stderr %q", code, stderr)
		}
	})

	t.Run("failing messages land in the parking lot with the contract headers", func(t *testing.T) {
		p := writePipeline(t, 200*time.Millisecond)
		code, stdout, stderr := c.run("topology", "declare", "-f", p.file)
		if code != 0 || strings.Count(stdout, "created") != 9 {
			t.Fatalf("topology declare: exit %d\n%s%s", code, stdout, stderr)
		}

		daemon := c.command("daemon", "-f", p.file, "--metrics-addr", "127.0.0.1:0", "--exec", handlerScript(t, "flaky.sh"))
		logs, err := daemon.StderrPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := daemon.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan error, 1)
		lines := make(chan string, 1000)
		go func() {
			sc := bufio.NewScanner(logs)
			for sc.Scan() {
				lines <- sc.Text()
			}
			close(lines)
			exited <- daemon.Wait() // after stderr is read to the end
		}()
		t.Cleanup(func() { _ = daemon.Process.Kill() })
		metricsAddr := regexp.MustCompile(`addr=http://([^/]+)/metrics`)
		var metricsURL string
		for consuming := false; !consuming; {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("daemon exited before consuming: %v", <-exited)
				}
				if m := metricsAddr.FindStringSubmatch(l); m != nil {
					metricsURL = "http://" + m[1] + "/metrics"
				}
				consuming = strings.Contains(l, "msg=consuming")
			case <-time.After(30 * time.Second):
				t.Fatal("daemon did not start consuming")
			}
		}
		var rest strings.Builder
		drained := make(chan struct{})
		go func() { // keep the pipe drained; shown if the test fails
			defer close(drained)
			for l := range lines {
				rest.WriteString(l + "\n")
			}
		}()
		t.Cleanup(func() {
			_ = daemon.Process.Kill()
			<-drained
			if t.Failed() {
				t.Logf("daemon log:\n%s", rest.String())
			}
		})

		ch := brokertest.Channel(t)
		var msgs []amqp.Publishing
		for _, b := range []string{"good 1", "please fail", "good 2", "poison pill", "fail again", "good 3"} {
			id := strings.ReplaceAll(b, " ", "-")
			msgs = append(msgs, amqp.Publishing{MessageId: id, ContentType: "text/plain", Body: []byte(b)})
		}
		brokertest.PublishMany(t, ch, p.Main.Exchange, p.Main.RoutingKey, msgs)

		brokertest.Eventually(t, 30*time.Second, 50*time.Millisecond,
			func() bool { return brokertest.Depth(t, ch, p.Error.Queue) >= 3 },
			func() string {
				return fmt.Sprintf("parking lot holds %d of 3 failing messages", brokertest.Depth(t, ch, p.Error.Queue))
			})
		metrics := scrape(t, metricsURL)
		for _, want := range []string{
			`parkinglot_messages_total{outcome="done"} 3`,
			`parkinglot_messages_total{outcome="parked"} 3`,
			`parkinglot_messages_total{outcome="retried"} 4`,
			`parkinglot_in_flight 0`,
			`parkinglot_reconnects_total 0`,
			`parkinglot_handler_duration_seconds_count 10`,
		} {
			if !strings.Contains(metrics, want+"\n") {
				t.Errorf("metrics lack %q", want)
			}
		}

		if err := daemon.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		awaitExit0(t, exited, "the daemon after SIGTERM")

		parked := map[string]amqp.Delivery{}
		for _, d := range brokertest.Drain(t, ch, p.Error.Queue) {
			parked[d.MessageId] = d
		}
		for id, want := range map[string]struct {
			kind    string
			retries int32
			err     string
		}{
			"please-fail": {retrycore.KindRetriesExhausted, 2, "db down (attempt 3)"},
			"fail-again":  {retrycore.KindRetriesExhausted, 2, "db down (attempt 3)"},
			"poison-pill": {retrycore.KindPermanent, 0, "cannot parse message poison-pill"},
		} {
			d, ok := parked[id]
			if !ok {
				t.Errorf("%s is not in the parking lot (have %v)", id, keys(parked))
				continue
			}
			h := d.Headers
			if h[retrycore.HeaderFailureKind] != want.kind || h[retrycore.HeaderRetryCount] != want.retries || h[retrycore.HeaderLastError] != want.err ||
				h[retrycore.HeaderOriginalExchange] != p.Main.Exchange || h[retrycore.HeaderOriginalRoutingKey] != p.Main.RoutingKey || h[retrycore.HeaderOriginalQueue] != p.Main.Queue {
				t.Errorf("%s headers: %v", id, h)
			}
			if _, ok := h[retrycore.HeaderFirstFailedAt].(time.Time); !ok {
				t.Errorf("%s: x-first-failed-at = %#v", id, h[retrycore.HeaderFirstFailedAt])
			}
			if _, ok := h[retrycore.HeaderParkedAt].(time.Time); !ok {
				t.Errorf("%s: x-parked-at = %#v", id, h[retrycore.HeaderParkedAt])
			}
			if d.ContentType != "text/plain" {
				t.Errorf("%s: content type %q", id, d.ContentType)
			}
		}
		if len(parked) != 3 {
			t.Errorf("parking lot held %d messages, want 3: %v", len(parked), keys(parked))
		}
		if n := brokertest.Depth(t, ch, p.Main.Queue) + brokertest.Depth(t, ch, p.Tiers()[0].Queue); n != 0 {
			t.Errorf("%d messages left outside the parking lot", n)
		}
	})
}

// cliPipeline is a pipeline file written for the binary.
type cliPipeline struct {
	retrycore.Pipeline
	file string
}

// writePipeline writes a 15-line pipeline.yaml with names unique to the
// test and deletes what it declares when the test ends.
func writePipeline(t *testing.T, delay time.Duration) cliPipeline {
	t.Helper()
	p := retrytest.Pipeline(t, retrycore.QueueClassic, delay)
	p.MaxRetries = 2
	yaml := fmt.Sprintf(`# written by %s
name: %s
queue_type: classic
main:
  exchange: %s
  queue: %s
  routing_key: %s
retry:
  exchange: %s
  routing_key: %s
  delays: [%s]
error: {exchange: %s, queue: %s, routing_key: %s}
max_retries: %d
prefetch: 10
concurrency: 2
handler_timeout: 10s
`, t.Name(), p.Name, p.Main.Exchange, p.Main.Queue, p.Main.RoutingKey, p.Retry.Exchange, p.Retry.RoutingKey,
		p.Retry.Delays[0].Text, p.Error.Exchange, p.Error.Queue, p.Error.RoutingKey, p.MaxRetries)
	file := filepath.Join(t.TempDir(), "pipeline.yaml")
	if err := os.WriteFile(file, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := retrycore.LoadPipeline(file); err != nil {
		t.Fatalf("the test's own pipeline file: %v", err)
	}
	return cliPipeline{Pipeline: p, file: file}
}

func scrape(t *testing.T, url string) string {
	t.Helper()
	if url == "" {
		t.Fatal("the daemon did not log its metrics address")
	}
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

func keys(m map[string]amqp.Delivery) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
