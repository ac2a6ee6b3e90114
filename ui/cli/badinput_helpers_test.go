//go:build integration

package cli_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker/brokertest"
	"github.com/parkinglot/parkinglot/ui/cli/clitest"
)

// The bad input corpus (badinput_test.go) runs the real binary once per
// case. Every case connects as a dedicated broker user with a unique random
// password (never guest), so that a leak of it anywhere is a leak; the
// users with fewer permissions have passwords of their own.

// corpusUsers are the broker users of the corpus, made once for all cases.
type corpusUsers struct {
	user, password     string // full permissions on "/", management tag
	noPerm, noPermPass string // no permissions at all
	readOnly, roPass   string // read but no configure or write
	writeOnly, woPass  string // write but no read
	wrong              string // a password no user has
	// writeRefused is how the broker words a refused publish: "access to
	// exchange" before 4.0, "write access to exchange" from 4.0.
	writeRefused string
}

func (u corpusUsers) secrets() []string {
	return []string{u.password, u.noPermPass, u.roPass, u.woPass, u.wrong}
}

func (u corpusUsers) url() string           { return brokertest.URLFor(u.user, u.password, "") }
func (u corpusUsers) managementURL() string { return brokertest.ManagementURLFor(u.user, u.password) }

func newCorpusUsers(t *testing.T) corpusUsers {
	t.Helper()
	r := func() string { return randHex(t, 10) }
	u := corpusUsers{
		user: "pltest-badinput-" + r(), password: "pw-" + r(),
		noPerm: "pltest-badinput-noperm-" + r(), noPermPass: "pw-" + r(),
		readOnly: "pltest-badinput-ro-" + r(), roPass: "pw-" + r(),
		writeOnly: "pltest-badinput-wo-" + r(), woPass: "pw-" + r(),
		wrong:        "pw-" + r(),
		writeRefused: "access to exchange",
	}
	if brokertest.Version(t).AtLeast(4, 0, 0) {
		u.writeRefused = "write access to exchange"
	}
	brokertest.CreateUser(t, u.user, u.password, "management", true)
	brokertest.CreateUser(t, u.noPerm, u.noPermPass, "management", false)
	brokertest.CreateUser(t, u.readOnly, u.roPass, "management", false)
	brokertest.SetPermissions(t, u.readOnly, "", "", ".*")
	brokertest.CreateUser(t, u.writeOnly, u.woPass, "management", false)
	brokertest.SetPermissions(t, u.writeOnly, "", ".*", "")
	return u
}

func randHex(t testing.TB, n int) string {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%x", b)
}

// bx is one case's fixture: a guest channel for setting up and checking,
// the CLI running as the corpus user, the queues the case watches and the
// change of depth it expects of each.
type bx struct {
	t     *testing.T
	u     corpusUsers
	ch    *amqp.Channel
	c     *corpusCLI
	dir   string
	order []string
	delta map[string]int
	// before is each watched queue's depth once the setup is done.
	before map[string]int
	// until, when set, runs the case's command as a daemon until it
	// reports true; after holds the case's further checks.
	until func() bool
	after func(corpusResult)
}

func newBX(t *testing.T, u corpusUsers) *bx {
	b := &bx{t: t, u: u, ch: brokertest.Channel(t), c: newCorpusCLI(t), dir: t.TempDir(), delta: map[string]int{}}
	b.c.Env = append(b.c.Env,
		"PARKINGLOT_URL="+u.url(),
		"PARKINGLOT_MANAGEMENT_URL="+u.managementURL(),
		"TMPDIR="+b.dir,
	)
	return b
}

// queue declares a classic queue (or one with args) watched for lost
// messages: its depth must not change unless expect says otherwise.
func (b *bx) queue(suffix string, args amqp.Table) string {
	b.t.Helper()
	q := brokertest.Name(b.t, suffix)
	brokertest.DeclareQueue(b.t, b.ch, q, args)
	b.watch(q)
	return q
}

func (b *bx) watch(q string) {
	if _, ok := b.delta[q]; !ok {
		b.order = append(b.order, q)
		b.delta[q] = 0
	}
}

// expect says the case changes q's depth by d (a replay moves one message:
// -1 here, +1 there).
func (b *bx) expect(q string, d int) { b.delta[q] = d }

// park publishes messages to q (confirmed, routed).
func (b *bx) park(q string, msgs ...amqp.Publishing) {
	b.t.Helper()
	for i := range msgs {
		if msgs[i].DeliveryMode == 0 {
			msgs[i].DeliveryMode = amqp.Persistent
		}
	}
	brokertest.PublishMany(b.t, b.ch, "", q, msgs)
}

// parkText parks n small text messages with ids m-00000….
func (b *bx) parkText(q string, n int) {
	b.t.Helper()
	msgs := make([]amqp.Publishing, n)
	for i := range msgs {
		msgs[i] = amqp.Publishing{MessageId: idOf(i), ContentType: "text/plain", Body: []byte("body " + idOf(i)),
			Headers: amqp.Table{"x-last-error": "boom"}}
	}
	b.park(q, msgs...)
}

// file writes a file in the case's directory and returns its path.
func (b *bx) file(name, content string, mode os.FileMode) string {
	b.t.Helper()
	p := filepath.Join(b.dir, name)
	if err := os.WriteFile(p, []byte(content), mode); err != nil {
		b.t.Fatal(err)
	}
	return p
}

// env adds environment variables for the run (later ones win).
func (b *bx) env(kv ...string) { b.c.Env = append(b.c.Env, kv...) }

// snapshot records the depth of every watched queue.
func (b *bx) snapshot() {
	b.t.Helper()
	b.before = map[string]int{}
	for _, q := range b.order {
		b.before[q] = brokertest.Depth(b.t, b.ch, q)
	}
}

// conserved waits until every watched queue holds its depth before the run
// plus the expected change (given-back messages are ready again soon after
// the nack, not at once) and fails the case if one does not.
func (b *bx) conserved() {
	b.t.Helper()
	for _, q := range b.order {
		want := b.before[q] + b.delta[q]
		var got int
		if !brokertest.Poll(15*time.Second, 20*time.Millisecond, func() bool {
			got = brokertest.Depth(b.t, b.ch, q)
			return got == want
		}) {
			b.t.Errorf("queue %s: %d messages, want %d (before %d, expected change %+d): a message was lost or duplicated", q, got, want, b.before[q], b.delta[q])
		}
	}
}

// peek returns every message of q and gives them all back (nack, requeue),
// so that a check can read headers without taking anything.
func (b *bx) peek(q string) []amqp.Delivery {
	b.t.Helper()
	ch := brokertest.Channel(b.t)
	var out []amqp.Delivery
	for {
		d, ok, err := ch.Get(q, false)
		if err != nil {
			b.t.Fatalf("get from %s: %v", q, err)
		}
		if !ok {
			break
		}
		out = append(out, d)
	}
	if len(out) > 0 {
		if err := ch.Nack(out[len(out)-1].DeliveryTag, true, true); err != nil { // multiple, requeue
			b.t.Fatalf("give back: %v", err)
		}
	}
	return out
}

// pipelineFile is a pipeline declared through the binary for a daemon case.
type pipelineFile struct {
	file                   string
	mainEx, mainKey        string
	mainQ, delayQ, parking string
	retryEx, errorEx       string
}

// pipeline writes a pipeline file with names unique to the case, declares
// it with `topology declare` (as the corpus user) and watches its queues.
func (b *bx) pipeline(maxRetries int, timeout string) pipelineFile {
	b.t.Helper()
	name := brokertest.Name(b.t, "p")
	p := pipelineFile{
		mainEx: name + ".main", mainKey: "execute", mainQ: name + ".main.q",
		retryEx: name + ".retry", errorEx: name + ".error", parking: name + ".dlq",
		delayQ: name + ".retry.100ms",
	}
	p.file = b.file("pipeline.yaml", fmt.Sprintf(`name: %s
main: {exchange: %s, queue: %s, routing_key: %s}
retry: {exchange: %s, routing_key: retry, delays: [100ms]}
error: {exchange: %s, queue: %s, routing_key: error}
max_retries: %d
concurrency: 2
handler_timeout: %s
`, name, p.mainEx, p.mainQ, p.mainKey, p.retryEx, p.errorEx, p.parking, maxRetries, timeout), 0o600)
	for _, q := range []string{p.mainQ, p.delayQ, p.parking} {
		brokertest.DeleteQueueAtEnd(b.t, q)
	}
	for _, ex := range []string{p.mainEx, p.retryEx, p.errorEx} {
		brokertest.DeleteExchangeAtEnd(b.t, ex)
	}
	r := b.c.run("", "topology", "declare", "-f", p.file)
	if r.code != 0 {
		b.t.Fatalf("topology declare: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	b.checkSecrets("topology declare", r.stdout+r.stderr)
	for _, q := range []string{p.mainQ, p.delayQ, p.parking} {
		b.watch(q)
	}
	return p
}

// script writes an executable shell script (a handler or an editor).
func (b *bx) script(name, body string) string {
	b.t.Helper()
	return b.file(name, "#!/bin/sh\n"+body+"\n", 0o700)
}

// syncBuffer is a bytes.Buffer safe for a writer and a reader.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// daemon runs the binary until done reports true (polled; at most 60s),
// then stops it with SIGTERM and returns its result.
func (b *bx) daemon(args []string, done func() bool) corpusResult {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := b.c.Command(ctx, args...)
	var out, errb syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		b.t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	var err error
	quit := false // exited before it was done: the result says why
	if !brokertest.Poll(60*time.Second, 50*time.Millisecond, func() bool {
		select {
		case err = <-exited:
			quit = true
		default:
		}
		return quit || done()
	}) {
		b.t.Errorf("daemon: not done within 60s\n%s", errb.String())
	}
	if cmd.ProcessState == nil && err == nil {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err = <-exited:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			err = <-exited
			b.t.Errorf("daemon did not stop within 30s of SIGTERM")
		}
	}
	res := corpusResult{stdout: out.String(), stderr: errb.String()}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		res.code = ee.ExitCode()
	default:
		b.t.Fatalf("daemon: %v", err)
	}
	return res
}

// Output checks shared by every case.
var (
	// goLeak finds Go's words in a message meant for people: type and
	// function names (*amqp.Error, retrycore.Pipeline, strconv.ParseInt),
	// stack traces, fmt's bad verbs and raw broker exceptions.
	goLeak = regexp.MustCompile(`(?:^|[\s*"'(\[:])\*?(?:amqp|amqp091|broker|replay|retrycore|ui|json|yaml|strconv|tls|x509|net|os|url|http|reflect|exec|syscall|fs|io|bufio|time|errors)\.[A-Za-z_]\w*` +
		`|Go (?:struct|value|type)|Exception \(\d+\)|\b[A-Z]+_[A-Z_]+ - |panic:|goroutine \d+ \[|\.go:\d+|%!\w\(|<nil>`)
	errorLine = regexp.MustCompile(`^parkinglot: `)
)

// checkSecrets fails when any corpus password appears in text.
func (b *bx) checkSecrets(what, text string) {
	b.t.Helper()
	for _, s := range b.u.secrets() {
		if strings.Contains(text, s) {
			b.t.Errorf("%s shows a password", what)
		}
	}
}

// checkOutput asserts the shape of stderr: with a non-zero exit exactly one
// error line ("parkinglot: …") holding want, besides notes (and log lines
// when logs is set); with exit 0 no error line. Nowhere a Go type name, a
// stack trace or a password.
func (b *bx) checkOutput(r corpusResult, want string, logs bool) {
	b.t.Helper()
	var errs []string
	for _, l := range strings.Split(strings.TrimRight(r.stderr, "\n"), "\n") {
		switch {
		case l == "":
		case errorLine.MatchString(l):
			errs = append(errs, l)
		case strings.HasPrefix(l, "note: "), strings.HasPrefix(l, "nothing to replay"):
		case logs && strings.HasPrefix(l, "time="):
		default:
			b.t.Errorf("stderr line is neither the error nor a note: %q", l)
		}
	}
	if r.code != 0 {
		if len(errs) != 1 {
			b.t.Errorf("exit %d: want one error line on stderr, got %d:\n%s", r.code, len(errs), r.stderr)
		} else if !strings.Contains(errs[0], want) {
			b.t.Errorf("error line %q does not name the problem (want %q)", errs[0], want)
		}
	} else if len(errs) > 0 {
		b.t.Errorf("exit 0 with an error line: %q", errs)
	}
	for _, s := range []string{r.stdout, r.stderr} {
		if m := goLeak.FindString(s); m != "" {
			b.t.Errorf("output shows Go's or the broker's internals (%q):\n%s", m, cutForLog(s))
		}
	}
	b.checkSecrets("output", r.stdout+r.stderr)
	if data, err := os.ReadFile(b.c.audit); err == nil {
		b.checkSecrets("audit log", string(data))
	}
}

func cutForLog(s string) string {
	if len(s) > 4000 {
		return s[:4000] + "…"
	}
	return s
}

// jsonLines decodes every line of s as a JSON object, failing on any that
// is not one.
func jsonLines(t testing.TB, s string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for i, l := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		if l == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("line %d is not one JSON object: %v: %s", i+1, err, cutForLog(l))
		}
		out = append(out, m)
	}
	return out
}

// corpusCLI runs the real binary against the test broker with a private
// config directory and audit log.
type corpusCLI struct {
	*clitest.CLI
	t     testing.TB
	audit string
}

func newCorpusCLI(t testing.TB) *corpusCLI {
	dir := t.TempDir()
	audit := filepath.Join(dir, "audit.jsonl")
	return &corpusCLI{t: t, audit: audit, CLI: clitest.NewCLI(t,
		"PARKINGLOT_AUDIT_LOG="+audit,
		"PARKINGLOT_CONNECTION_NAME="+brokertest.Name(t, ""),
		"XDG_CONFIG_HOME="+dir,
		"XDG_STATE_HOME="+dir,
	)}
}

// corpusResult is one run of the binary.
type corpusResult struct {
	stdout, stderr string
	code           int
}

func (c *corpusCLI) run(stdin string, args ...string) corpusResult {
	c.t.Helper()
	r := c.Run(stdin, args...)
	res := corpusResult{stdout: r.Stdout, stderr: r.Stderr, code: r.Code}
	if strings.Contains(res.stdout+res.stderr, "panic:") {
		c.t.Fatalf("parkinglot %v panicked:\n%s", args, res.stderr)
	}
	return res
}

func idOf(i int) string { return fmt.Sprintf("m-%05d", i) }

func bind(t testing.TB, ch *amqp.Channel, queue, exchange, key string) {
	t.Helper()
	if err := ch.QueueBind(queue, key, exchange, false, nil); err != nil {
		t.Fatalf("bind %s to %s/%s: %v", queue, exchange, key, err)
	}
}
