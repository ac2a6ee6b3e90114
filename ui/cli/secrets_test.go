//go:build integration

package cli_test

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker/brokertest"
)

// TestSecretsNeverAppearInAnyOutput runs the binary as a dedicated broker
// user with a unique random password through every command that talks to
// the broker — topology declare, the daemon (debug logging, a failing
// handler that prints its whole environment, a forced reconnect, /metrics),
// queues, list, show, replay (dry run and for real, which writes the audit
// log), export, delete — and through the failures that quote a URL: a wrong
// password, a missing vhost, an unparsable URL, a management API that does
// not answer. The password (and the wrong one) must appear in none of the
// outputs, the audit log, the metrics or the parked messages.
func TestSecretsNeverAppearInAnyOutput(t *testing.T) {
	secret := randomHex(t, 12)
	wrong := randomHex(t, 12)
	// Characters that must be percent-encoded in a URL, so that a leak of
	// either the raw or the encoded form carries the random part.
	password := "pw@" + secret + ":/#?"
	user := "pltest-secrets-" + randomHex(t, 4)
	brokertest.CreateUser(t, user, password, "management", true)
	amqpURL := brokertest.URLFor(user, password, "")
	mgmtURL := brokertest.ManagementURLFor(user, password)

	c := newCLI(t)
	audit := filepath.Join(t.TempDir(), "audit.jsonl")
	// PARKINGLOT_PASSWORD_FILE is not read (the URLs carry the password)
	// and not handed to the handler either.
	c.Env = append(c.Env, "PARKINGLOT_URL="+amqpURL, "PARKINGLOT_MANAGEMENT_URL="+mgmtURL, "PARKINGLOT_AUDIT_LOG="+audit, "PARKINGLOT_PASSWORD_FILE=/nonexistent/password")
	// AMQP_URL and MANAGEMENT_URL (the test broker's guest URLs) stay in the
	// environment: they are not secret here, and the handler must not see
	// them either.

	var outputs []checked
	record := func(what, text string) { outputs = append(outputs, checked{what, text}) }
	run := func(wantCode int, args ...string) string {
		t.Helper()
		code, stdout, stderr := c.run(args...)
		record(strings.Join(args, " ")+" (stdout)", stdout)
		record(strings.Join(args, " ")+" (stderr)", stderr)
		if wantCode >= 0 && code != wantCode {
			t.Errorf("%v: exit %d, want %d\nstdout %s\nstderr %s", redactArgs(args, secret, wrong), code, wantCode, stdout, stderr)
		}
		return stdout + stderr
	}

	p := writePipeline(t, 200*time.Millisecond)
	run(0, "topology", "declare", "-f", p.file)
	run(0, "--log-level", "debug", "topology", "declare", "-f", p.file, "-o", "json")

	// The daemon, with a handler that prints its environment (to the
	// daemon's stderr) and fails: poison bodies park at once, others retry
	// twice and park.
	handler := []string{"sh", "-c", `env; case "$(cat)" in *poison*) echo "poison $PARKINGLOT_MESSAGE_ID" >&2; exit 65;; esac; echo "transient: db down" >&2; exit 1`}
	d := startDaemon(t, c, append([]string{"--log-level", "debug", "daemon", "-f", p.file, "--metrics-addr", "127.0.0.1:0", "--exec"}, handler...)...)
	d.waitConsuming(t, 0, 60*time.Second)
	ch := brokertest.Channel(t)
	var msgs []amqp.Publishing
	for i := range 4 {
		body := "fail"
		if i%2 == 0 {
			body = "poison"
		}
		msgs = append(msgs, amqp.Publishing{MessageId: fmt.Sprintf("secret-test-%d", i), Body: []byte(body), ContentType: "text/plain"})
	}
	brokertest.PublishMany(t, ch, p.Main.Exchange, p.Main.RoutingKey, msgs)
	// A forced reconnect makes the daemon log its connection loss and the
	// URLs it dials again.
	m := brokertest.Management(t)
	from := d.log.len()
	brokertest.Eventually(t, 30*time.Second, 200*time.Millisecond,
		func() bool { return brokertest.CloseConnections(t, m, "parkinglot daemon "+p.Name) > 0 },
		func() string { return "the management API never listed the daemon's connections" })
	d.waitConsuming(t, from, 60*time.Second)
	brokertest.Eventually(t, 30*time.Second, 50*time.Millisecond,
		func() bool { return brokertest.Depth(t, ch, p.Error.Queue) >= len(msgs) },
		func() string {
			return fmt.Sprintf("parking lot holds %d of %d messages", brokertest.Depth(t, ch, p.Error.Queue), len(msgs))
		})
	metricsLine := regexp.MustCompile(`addr=http://([^/\s]+)/metrics`).FindStringSubmatch(d.log.all())
	if metricsLine == nil {
		t.Fatal("the daemon did not log its metrics address")
	}
	record("daemon /metrics", scrape(t, "http://"+metricsLine[1]+"/metrics"))
	d.stop(t)
	daemonLog := d.log.all()
	record("daemon stdout+stderr (debug, handler env)", daemonLog)
	if !strings.Contains(daemonLog, "PARKINGLOT_MESSAGE_ID=") {
		t.Fatal("the handler's environment is not in the daemon's output; the check would prove nothing")
	}
	for _, k := range []string{"PARKINGLOT_URL=", "PARKINGLOT_MANAGEMENT_URL=", "PARKINGLOT_PASSWORD_FILE=", "AMQP_URL=", "MANAGEMENT_URL="} {
		if strings.Contains(daemonLog, "\n"+k) {
			t.Errorf("the exec handler inherited %s", strings.TrimSuffix(k, "="))
		}
	}

	// The browse and replay commands on the parking lot.
	q := p.Error.Queue
	run(0, "queues")
	run(0, "queues", "-o", "json")
	run(0, "--log-level", "debug", "list", q)
	run(0, "list", q, "-o", "json")
	run(0, "show", q, "secret-test-0")
	run(0, "show", q, "secret-test-1", "-o", "json")
	run(-1, "replay", q, "--all", "--dry-run")
	run(0, "export", q)
	run(0, "--log-level", "debug", "replay", q, "--id", "secret-test-0", "--yes")
	run(0, "delete", q, "--id", "secret-test-1", "--yes")
	if b, err := os.ReadFile(audit); err != nil || len(b) == 0 {
		t.Errorf("no audit log written (%v); the check would prove nothing", err)
	} else {
		record("audit log", string(b))
	}
	// What the replay sent to the main queue, and what is still parked.
	for _, dl := range append(brokertest.Drain(t, ch, p.Main.Queue), brokertest.Drain(t, ch, q)...) {
		record("message "+dl.MessageId, fmt.Sprintf("%v %s", dl.Headers, dl.Body))
	}

	// Failures that quote the URL.
	badPassword := brokertest.URLFor(user, "pw-"+wrong, "")
	for _, args := range [][]string{
		{"--url", badPassword, "topology", "declare", "-f", p.file},
		{"--url", badPassword, "daemon", "-f", p.file, "--exec", "true"},
		{"--url", badPassword, "queues"}, // each refused password costs ~3s (the broker's delay)
		{"--management-url", brokertest.ManagementURLFor(user, "pw-"+wrong), "queues"},
		{"--url", brokertest.URLFor(user, password, "no-such-vhost-"+randomHex(t, 4)), "list", q},
		{"--url", brokertest.URLFor(user, password, "no-such-vhost-"+randomHex(t, 4)), "daemon", "-f", p.file, "--exec", "true"},
		{"--url", strings.Replace(amqpURL, ":5672", ":notaport", 1), "queues"},
		{"--url", "amqp://" + user + ":pw@" + secret + "@127.0.0.1:5672/", "queues"}, // an unescaped "@" in the password
		{"--url", "http://" + user + ":" + url.QueryEscape(password) + "@127.0.0.1:5672/", "queues"},
		{"--management-url", "http://" + user + ":" + url.QueryEscape(password) + "@127.0.0.1:1/", "queues"},
		{"--management-url", "http://" + user + ":" + url.QueryEscape(password) + "@127.0.0.1:1/", "list", q},
	} {
		out := run(-1, args...)
		if strings.TrimSpace(out) == "" {
			t.Errorf("%v printed nothing", redactArgs(args, secret, wrong))
		}
	}

	// Password sources: URLs that name the user and
	// no password take it from PARKINGLOT_PASSWORD_FILE, a context's
	// password_file or its password_command; `config` says where from; a
	// config file readable by others with a clear-text password warns; a
	// failing command's error quotes neither what it printed nor the
	// secret.
	dir := t.TempDir()
	pwFile := filepath.Join(dir, "rabbit-password")
	if err := os.WriteFile(pwFile, []byte(password+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	userOnly := func(raw string) string {
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		u.User = url.User(user)
		return u.String()
	}
	srcRun := func(env []string, wantCode int, args ...string) string {
		t.Helper()
		sc := newCLI(t)
		sc.Env = append(sc.Env, "PARKINGLOT_AUDIT_LOG="+audit)
		sc.Env = append(sc.Env, env...)
		r := sc.Run("", args...)
		record(strings.Join(args, " ")+" with a password source (stdout)", r.Stdout)
		record(strings.Join(args, " ")+" with a password source (stderr)", r.Stderr)
		if wantCode >= 0 && r.Code != wantCode {
			t.Errorf("%v: exit %d, want %d\nstdout %s\nstderr %s", redactArgs(args, secret, wrong), r.Code, wantCode, r.Stdout, r.Stderr)
		}
		return r.Stdout + r.Stderr
	}
	fileEnv := []string{"PARKINGLOT_URL=" + userOnly(amqpURL), "PARKINGLOT_MANAGEMENT_URL=" + userOnly(mgmtURL), "PARKINGLOT_PASSWORD_FILE=" + pwFile}
	srcRun(fileEnv, 0, "--log-level", "debug", "queues")
	srcRun(fileEnv, 0, "list", q, "-o", "json")
	if out := srcRun(fileEnv, 0, "config"); !strings.Contains(out, "PARKINGLOT_PASSWORD_FILE "+pwFile) {
		t.Errorf("config does not name the password file:\n%s", out)
	}
	srcRun(fileEnv, 0, "config", "-o", "json")
	config := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(config, []byte(fmt.Sprintf(`current_context: cmd
contexts:
  cmd:
    url: %q
    management_url: %q
    password_command: [cat, %q]
  fails:
    url: %q
    password_command: [sh, -c, 'cat "$0"; cat "$0" >&2; exit 7', %q]
  clear:
    url: %q
    management_url: %q
`, userOnly(amqpURL), userOnly(mgmtURL), pwFile, userOnly(amqpURL), pwFile, amqpURL, mgmtURL)), 0o644); err != nil {
		t.Fatal(err)
	}
	noEnv := []string{"PARKINGLOT_URL=", "PARKINGLOT_MANAGEMENT_URL="}
	if out := srcRun(noEnv, 0, "--config", config, "--log-level", "debug", "queues"); !strings.Contains(out, "holds a password in clear text and others can read it") {
		t.Errorf("no clear-text warning for a config file of mode 644:\n%s", out)
	}
	srcRun(noEnv, 0, "--config", config, "config")
	srcRun(noEnv, 0, "--config", config, "--context", "clear", "config", "-o", "json")
	if out := srcRun(noEnv, 2, "--config", config, "--context", "fails", "queues"); !strings.Contains(out, "password_command sh … of context fails: exited 7") {
		t.Errorf("the failing password command's error:\n%s", out)
	}

	leaks, bytes := 0, 0
	for _, o := range outputs {
		bytes += len(o.text)
		for _, s := range []string{secret, wrong} {
			if i := strings.Index(o.text, s); i >= 0 {
				leaks++
				t.Errorf("%s shows a password: …%s…", redactArgs([]string{o.what}, secret, wrong)[0], redactArgs([]string{o.text[max(i-60, 0):min(i+len(s)+20, len(o.text))]}, secret, wrong)[0])
			}
		}
	}
	brokertest.Figures(t, "secrets: outputs_checked=%d bytes=%d leaks=%d", len(outputs), bytes, leaks)
}

// checked is one output the password must not appear in.
type checked struct{ what, text string }

func randomHex(t *testing.T, n int) string {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// redactArgs masks the secrets in what the test itself prints on failure.
func redactArgs(args []string, secrets ...string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		for _, s := range secrets {
			a = strings.ReplaceAll(a, s, "<secret>")
		}
		out[i] = a
	}
	return out
}
