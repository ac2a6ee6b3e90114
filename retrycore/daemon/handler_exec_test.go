package daemon

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker/brokertest"
	"github.com/parkinglot/parkinglot/retrycore"
)

// handlerScript is a test handler under testdata/handlers, by absolute path.
func handlerScript(t *testing.T, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("..", "..", "testdata", "handlers", name))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatal(err)
	}
	return p
}

func newExec(t *testing.T, argv ...string) *ExecHandler {
	t.Helper()
	h, err := NewExecHandler(argv, ExecOptions{KillGrace: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestExecHandlerMissingBinaryFailsAtStartUp(t *testing.T) {
	for _, argv := range [][]string{{"/nonexistent/handler.sh"}, {"parkinglot-no-such-command-xyz"}} {
		_, err := NewExecHandler(argv, ExecOptions{})
		if err == nil {
			t.Fatalf("%q: no error", argv[0])
		}
		if !strings.Contains(err.Error(), argv[0]) || !(strings.Contains(err.Error(), "no such file") || strings.Contains(err.Error(), "not found in $PATH")) {
			t.Fatalf("%q: unclear error %q", argv[0], err)
		}
	}
	if _, err := NewExecHandler(nil, ExecOptions{}); err == nil {
		t.Fatal("an empty command must be refused")
	}
}

func TestExecHandlerNotExecutableFailsAtStartUp(t *testing.T) {
	p := filepath.Join(t.TempDir(), "handler.sh")
	if err := os.WriteFile(p, []byte("#!/bin/sh\nexit 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := NewExecHandler([]string{p}, ExecOptions{})
	if err == nil || !strings.Contains(err.Error(), "not executable") {
		t.Fatalf("err = %v, want it to say the file is not executable", err)
	}
}

func TestExecHandlerExitZeroIsDone(t *testing.T) {
	if err := newExec(t, "true").Handle(context.Background(), Delivery{}); err != nil {
		t.Fatal(err)
	}
}

func TestExecHandlerExit65IsPermanent(t *testing.T) {
	err := newExec(t, handlerScript(t, "poison.sh")).Handle(context.Background(), Delivery{})
	if !IsPermanent(err) {
		t.Fatalf("err = %v, want permanent", err)
	}
	if err.Error() != "bad payload: expected JSON" {
		t.Fatalf("error text %q, want the last stderr line", err)
	}
}

func TestExecHandlerOtherExitIsTransientWithLastStderrLine(t *testing.T) {
	h := newExec(t, "sh", "-c", `echo first >&2; echo "db down" >&2; echo >&2; exit 3`)
	err := h.Handle(context.Background(), Delivery{})
	if err == nil || IsPermanent(err) || err.Error() != "db down" {
		t.Fatalf("err = %v, want transient \"db down\"", err)
	}
	err = newExec(t, "sh", "-c", "exit 4").Handle(context.Background(), Delivery{})
	if err == nil || err.Error() != "handler exited with status 4" {
		t.Fatalf("silent failure: err = %v", err)
	}
}

func TestExecHandlerSignalIsTransient(t *testing.T) {
	err := newExec(t, "sh", "-c", "kill -TERM $$").Handle(context.Background(), Delivery{})
	if err == nil || IsPermanent(err) || err.Error() != "handler killed by signal terminated" {
		t.Fatalf("err = %v, want transient killed by signal", err)
	}
}

func TestExecHandlerMegabytesOfStderrKeepOnlyTheTail(t *testing.T) {
	err := newExec(t, handlerScript(t, "noisy.sh")).Handle(context.Background(), Delivery{})
	if err == nil || err.Error() != "the real error" {
		t.Fatalf("err = %v, want the last non-empty line", err)
	}
	tb := &tailBuffer{max: stderrTail}
	chunk := []byte(strings.Repeat("y", 1000) + "\n")
	for i := 0; i < 4000; i++ { // 4 MB
		_, _ = tb.Write(chunk)
	}
	if len(tb.buf) > stderrTail {
		t.Fatalf("tail holds %d bytes, want <= %d", len(tb.buf), stderrTail)
	}
	_, _ = tb.Write([]byte(strings.Repeat("z", 3000)))
	if got := tb.lastLine(); len(got) > retrycore.MaxErrorLen || !strings.HasPrefix(got, "zzz") {
		t.Fatalf("last line = %.20q… (%d bytes)", got, len(got))
	}
}

func TestExecHandlerTimeoutKillsTheProcessGroup(t *testing.T) {
	pids := filepath.Join(t.TempDir(), "pids")
	h := newExec(t, handlerScript(t, "hang.sh"), pids)
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	start := time.Now()
	err := h.Handle(ctx, Delivery{})
	if err == nil || !errors.Is(err, context.DeadlineExceeded) || IsPermanent(err) {
		t.Fatalf("err = %v, want a transient deadline error", err)
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Fatalf("Handle returned after %v: the kill did not take", took)
	}
	if !strings.Contains(err.Error(), "last stderr: still working") {
		t.Fatalf("err = %q, want the last stderr line", err)
	}
	data, rerr := os.ReadFile(pids)
	if rerr != nil {
		t.Fatalf("the script did not record its pids: %v", rerr)
	}
	for _, f := range strings.Fields(string(data)) {
		pid, _ := strconv.Atoi(f)
		waitGone(t, pid)
	}
}

// waitGone polls (with a deadline) until pid no longer runs: gone, or a
// zombie waiting for init to reap it.
func waitGone(t *testing.T, pid int) {
	t.Helper()
	var state string
	brokertest.Eventually(t, 5*time.Second, 20*time.Millisecond, func() bool {
		s, ok := procState(pid)
		state = s
		return !ok || s == "Z" || s == "X"
	}, func() string {
		return fmt.Sprintf("process %d still running (state %s) after the timeout kill", pid, state)
	})
}

func procState(pid int) (string, bool) {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return "", false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "State:"); ok {
			return strings.Fields(rest)[0], true
		}
	}
	return "", false
}

func TestExecHandlerEnvironmentAndStdin(t *testing.T) {
	dir := t.TempDir()
	envFile, bodyFile := filepath.Join(dir, "env"), filepath.Join(dir, "body")
	h := newExec(t, handlerScript(t, "env.sh"), envFile, bodyFile)
	d := Delivery{MessageID: "m-7", RoutingKey: "payment.execute", Attempt: 3,
		Headers: amqp.Table{"x-retry-count": int32(2), "note": "a\nb"}, Body: []byte("the body\x00bytes")}
	if err := h.Handle(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	body, _ := os.ReadFile(bodyFile)
	if string(body) != "the body\x00bytes" {
		t.Fatalf("stdin = %q", body)
	}
	env := map[string]string{}
	raw, _ := os.ReadFile(envFile)
	for _, line := range strings.Split(string(raw), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok && strings.HasPrefix(k, "PARKINGLOT_") {
			env[k] = v
		}
	}
	if env["PARKINGLOT_MESSAGE_ID"] != "m-7" || env["PARKINGLOT_ROUTING_KEY"] != "payment.execute" || env["PARKINGLOT_ATTEMPT"] != "3" {
		t.Fatalf("env = %v", env)
	}
	var hdrs map[string]any
	if err := json.Unmarshal([]byte(env["PARKINGLOT_HEADERS"]), &hdrs); err != nil {
		t.Fatalf("PARKINGLOT_HEADERS %q: %v", env["PARKINGLOT_HEADERS"], err)
	}
	if hdrs["x-retry-count"] != float64(2) || hdrs["note"] != "a\nb" {
		t.Fatalf("headers = %v", hdrs)
	}
}

func TestExecHandlerDoesNotPassTheBrokerPassword(t *testing.T) {
	t.Setenv("PARKINGLOT_URL", "amqp://guest:s3cret-env@127.0.0.1:5672/")
	t.Setenv("PARKINGLOT_MANAGEMENT_URL", "http://guest:s3cret-env@127.0.0.1:15672")
	dir := t.TempDir()
	envFile := filepath.Join(dir, "env")
	h := newExec(t, handlerScript(t, "env.sh"), envFile, filepath.Join(dir, "body"))
	if err := h.Handle(context.Background(), Delivery{MessageID: "m"}); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(envFile)
	if strings.Contains(string(raw), "s3cret-env") {
		t.Fatalf("the handler's environment holds the broker password:\n%s", raw)
	}
}

func TestExecHandlerHeadersEnvIsBounded(t *testing.T) {
	deaths := make([]any, 2000)
	for i := range deaths {
		deaths[i] = amqp.Table{"queue": strings.Repeat("q", 80), "reason": "expired", "count": int64(i)}
	}
	d := Delivery{Headers: amqp.Table{retrycore.HeaderDeath: deaths, "keep": "me"}}
	s := headersEnv(d)
	if len(s) > maxHeadersEnv || !strings.Contains(s, `"keep":"me"`) || strings.Contains(s, retrycore.HeaderDeath) {
		t.Fatalf("PARKINGLOT_HEADERS is %d bytes (max %d); x-death must go first", len(s), maxHeadersEnv)
	}
}

// A handler that exits 0 leaving something in the background that holds
// its stderr is done: the message is not retried (its work done again).
func TestExecHandlerExitZeroLeavingAChildRunningIsDone(t *testing.T) {
	if err := newExec(t, "sh", "-c", "sleep 3 & exit 0").Handle(context.Background(), Delivery{}); err != nil {
		t.Fatalf("err = %v, want done", err)
	}
}
