//go:build integration

package cli_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker/brokertest"
)

// badCase is one entry of the bad input corpus: what an on-call engineer
// types or meets, run through the real binary.
type badCase struct {
	name string
	// setup prepares broker and files (watching the queues it makes) and
	// returns the command line. It may set b.until (run the command as a
	// daemon until it reports true) and b.after (further checks, which may
	// run more commands).
	setup func(b *bx) []string
	code  int    // exit status (README, "The CLI": 1 error, 2 usage, 3 partly done)
	want  string // the error line names the problem with this phrase (exit ≠ 0)
	out   string // stdout holds this (optional)
	logs  bool   // stderr may hold log lines (the daemon)
}

// TestBadInputCorpus runs every case in parallel against the real broker
// and asserts, for each: the exit status; one error line on stderr naming
// the problem, with no stack trace, Go type name or raw broker exception;
// no password in any output or in the audit log; and that no watched queue
// lost (or gained) a message beyond the case's expected change.
func TestBadInputCorpus(t *testing.T) {
	u := newCorpusUsers(t)
	cases := badInputCases(u)
	if len(cases) < 40 {
		t.Fatalf("the corpus holds %d cases, want at least 40", len(cases))
	}
	seen := map[string]bool{}
	for _, tc := range cases {
		if seen[tc.name] {
			t.Fatalf("two cases named %q", tc.name)
		}
		seen[tc.name] = true
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := newBX(t, u)
			args := tc.setup(b)
			b.snapshot()
			var r corpusResult
			if b.until != nil {
				r = b.daemon(args, b.until)
			} else {
				r = b.c.run("", args...)
			}
			if r.code != tc.code {
				t.Errorf("parkinglot %s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", redactSecrets(args, u), r.code, tc.code, cutForLog(r.stdout), cutForLog(r.stderr))
			}
			b.checkOutput(r, tc.want, tc.logs)
			if tc.out != "" && !strings.Contains(r.stdout, tc.out) {
				t.Errorf("stdout lacks %q:\n%s", tc.out, cutForLog(r.stdout))
			}
			if b.after != nil {
				b.after(r)
			}
			b.conserved()
		})
	}
}

func redactSecrets(args []string, u corpusUsers) string {
	s := strings.Join(args, " ")
	for _, p := range u.secrets() {
		s = strings.ReplaceAll(s, p, "xxxxx")
	}
	return s
}

// then runs one more command within a case and checks its output the same
// way (exit status, one error line, no leaks).
func (b *bx) then(code int, want string, args ...string) corpusResult {
	b.t.Helper()
	r := b.c.run("", args...)
	if r.code != code {
		b.t.Errorf("then parkinglot %s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", redactSecrets(args, b.u), r.code, code, cutForLog(r.stdout), cutForLog(r.stderr))
	}
	b.checkOutput(r, want, false)
	return r
}

// allTypes is a header of every AMQP field type amqp091-go writes.
func allTypes() amqp.Table {
	return amqp.Table{
		"bool": true, "int8": int8(-8), "uint8": uint8(8), "int16": int16(-16), "uint16": uint16(16),
		"int32": int32(-32), "uint32": uint32(32), "int64": int64(-64), "float32": float32(1.5), "float64": 2.25,
		"decimal": amqp.Decimal{Scale: 2, Value: 12345}, "string": "s", "bytes": []byte{1, 2, 0xff},
		"timestamp": time.Unix(1700000000, 0), "void": nil,
		"table": amqp.Table{"a": int32(1), "b": "two"}, "array": []any{int32(1), "two", 3.0, amqp.Table{"c": true}},
	}
}

// nested is a value nested n levels deep, tables and arrays in turn.
func nested(n int) any {
	var v any = "leaf"
	for i := range n {
		if i%2 == 0 {
			v = amqp.Table{"level": int32(n - i), "next": v}
		} else {
			v = []any{v, int32(n - i)}
		}
	}
	return v
}

func deaths(n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = amqp.Table{"count": int64(i + 1), "reason": "rejected", "queue": fmt.Sprintf("q%d", i), "exchange": "ex",
			"routing-keys": []any{"rk"}, "time": time.Unix(1700000000+int64(i), 0)}
	}
	return out
}

// headerString describes a header value with its Go type, for comparing a
// round trip.
func headerString(h amqp.Table) string {
	keys := make([]string, 0, len(h))
	for k := range h {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var sb strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&sb, "%s=%T:%v\n", k, h[k], h[k])
	}
	return sb.String()
}

func badInputCases(u corpusUsers) []badCase {
	pw := u.password
	// A pipeline file that is never declared, for the cases that fail
	// before connecting.
	pipelineText := func(name, extra string) string {
		return fmt.Sprintf("name: %s\nmain: {exchange: %[1]s.main, queue: %[1]s.q, routing_key: run}\nretry: {exchange: %[1]s.retry, routing_key: retry, delays: [1s]}\nerror: {exchange: %[1]s.error, queue: %[1]s.dlq, routing_key: error}\n%s", name, extra)
	}
	dlq := func(b *bx, n int) string {
		q := b.queue("dlq", nil)
		b.parkText(q, n)
		return q
	}
	jsonParked := func(b *bx) string {
		q := b.queue("dlq", nil)
		b.park(q, amqp.Publishing{MessageId: "order-7", ContentType: "application/json", Body: []byte(`{"amount":"12,50"}`),
			Headers: amqp.Table{"x-last-error": "amount is not a number"}})
		return q
	}
	exportFile := func(b *bx, lines ...string) string {
		return b.file("export.jsonl", strings.Join(lines, ""), 0o600)
	}
	oneExport := func(b *bx) string {
		return `{"queue":"` + brokertest.Name(b.t, "dst") + `","message":{"id":"a","exchange":"","routing_key":"x","properties":{"message_id":"a"},"headers":null,"body_encoding":"utf8","body":"hello"}}` + "\n"
	}

	return []badCase{
		// ---- where to connect
		{name: "url-malformed", code: 2, want: "cannot parse it", setup: func(b *bx) []string {
			return []string{"--url", "amqp://" + u.user + ":" + pw + "@127.0.0.1:5672/%zz", "list", "q"}
		}},
		// The password shows nowhere though the error quotes the URL.
		{name: "url-password-with-space", code: 2, want: "contains white space", setup: func(b *bx) []string {
			return []string{"--url", "amqp://" + u.user + ":S3cr3t " + pw + "@127.0.0.1:5672/", "list", "q"}
		}},
		{name: "url-scheme-http", code: 2, want: `scheme "http" is not amqp or amqps`, setup: func(b *bx) []string {
			return []string{"--url", "http://" + u.user + ":" + pw + "@127.0.0.1:5672/", "list", "q"}
		}},
		{name: "url-scheme-amqpx", code: 2, want: `scheme "amqpx" is not amqp or amqps`, setup: func(b *bx) []string {
			return []string{"--url", "amqpx://" + u.user + ":" + pw + "@127.0.0.1:5672/", "queues"}
		}},
		{name: "url-no-scheme", code: 2, want: "no scheme; use amqp:// or amqps://", setup: func(b *bx) []string {
			return []string{"--url", u.user + ":" + pw + "@127.0.0.1:5672", "list", "q"}
		}},
		{name: "url-no-host", code: 2, want: "no host", setup: func(b *bx) []string {
			return []string{"--url", "amqp://" + u.user + ":" + pw + "@:5672/", "list", "q"}
		}},
		{name: "url-bad-port", code: 2, want: "bad port; want a number from 1 to 65535", setup: func(b *bx) []string {
			return []string{"--url", "amqp://" + u.user + ":" + pw + "@127.0.0.1:99999/", "list", "q"}
		}},
		// Never amqp091-go's default password "guest" for a user without one.
		{name: "url-user-without-password", code: 2, want: `no password given for user "` + u.user + `" (write it in the URL, or set PARKINGLOT_PASSWORD_FILE`, setup: func(b *bx) []string {
			return []string{"--url", "amqp://" + u.user + "@127.0.0.1:5672/", "list", "q"}
		}},
		{name: "url-nothing-listens", code: 1, want: "nothing listens at 127.0.0.1:", setup: func(b *bx) []string {
			return []string{"--url", fmt.Sprintf("amqp://%s:%s@127.0.0.1:%d/", u.user, pw, brokertest.FreePort(b.t)), "list", "q"}
		}},
		{name: "wrong-password", code: 1, want: `wrong username or password for user "` + u.user + `"`, setup: func(b *bx) []string {
			q := dlq(b, 1)
			return []string{"--url", brokertest.URLFor(u.user, u.wrong, ""), "list", q}
		}},
		{name: "missing-vhost", code: 1, want: `vhost "no-such-vhost" does not exist or user "` + u.user + `" has no access to it`, setup: func(b *bx) []string {
			return []string{"--url", brokertest.URLFor(u.user, pw, "no-such-vhost"), "list", "q"}
		}},
		{name: "tls-ca-file-missing", code: 1, want: "read CA file: open /nonexistent/ca.pem: no such file", setup: func(b *bx) []string {
			return []string{"--url", "amqps://" + u.user + ":" + pw + "@127.0.0.1:5671/", "--tls-ca", "/nonexistent/ca.pem", "list", "q"}
		}},
		{name: "tls-to-a-plain-port", code: 1, want: "does not answer in TLS (a plain amqp:// port?", setup: func(b *bx) []string {
			return []string{"--url", "amqps://" + u.user + ":" + pw + "@127.0.0.1:5672/", "list", "q"}
		}},
		{name: "user-without-permissions", code: 1, want: `user "` + u.noPerm + `" has no access to it`, setup: func(b *bx) []string {
			q := dlq(b, 2)
			return []string{"--url", brokertest.URLFor(u.noPerm, u.noPermPass, ""), "replay", q, "--all", "--to", ":" + q, "--yes"}
		}},
		{name: "read-only-user-replay-refused-stays-parked", code: 3, want: "2 message(s) not done, 0 done: " + u.writeRefused + " 'amq.default' in vhost '/' refused for user '" + u.readOnly + "'",
			out: "not done: m-00001: " + u.writeRefused, setup: func(b *bx) []string {
				q := dlq(b, 2)
				dst := b.queue("dst", nil)
				return []string{"--url", brokertest.URLFor(u.readOnly, u.roPass, ""), "--management-url", brokertest.ManagementURLFor(u.readOnly, u.roPass),
					"replay", q, "--all", "--to", ":" + dst, "--yes"}
			}},
		{name: "read-only-user-replay-to-named-exchange-refused", code: 3, want: "access to exchange '", setup: func(b *bx) []string {
			q := dlq(b, 1)
			dst := b.queue("dst", nil)
			ex := brokertest.Name(b.t, "ex")
			brokertest.DeclareExchange(b.t, b.ch, ex, "direct")
			bind(b.t, b.ch, dst, ex, "rk")
			return []string{"--url", brokertest.URLFor(u.readOnly, u.roPass, ""), "replay", q, "--all", "--to", ex + ":rk", "--yes"}
		}},
		// RabbitMQ lets a consumer ack with read permission alone, so a
		// read-only user may delete: the message goes, audit-logged.
		{name: "read-only-user-delete-works-ack-needs-read-only", code: 0, out: "deleted 1 message(s)", setup: func(b *bx) []string {
			q := dlq(b, 2)
			b.expect(q, -1)
			return []string{"--url", brokertest.URLFor(u.readOnly, u.roPass, ""), "delete", q, "--id", idOf(0), "--yes"}
		}},
		{name: "write-only-user-list-refused", code: 1, want: "refused for user '" + u.writeOnly + "'", setup: func(b *bx) []string {
			q := dlq(b, 2)
			return []string{"--url", brokertest.URLFor(u.writeOnly, u.woPass, ""), "--management-url", brokertest.ManagementURLFor(u.writeOnly, u.woPass), "list", q}
		}},

		// ---- the management API
		{name: "management-down-queues-says-so", code: 1, want: "management API unavailable: http://127.0.0.1:1 is not answering (enable rabbitmq_management or pass --management-url)", setup: func(b *bx) []string {
			return []string{"--management-url", "http://" + u.user + ":" + pw + "@127.0.0.1:1", "queues"}
		}},
		{name: "management-down-list-works", code: 0, out: idOf(2), setup: func(b *bx) []string {
			q := dlq(b, 3)
			b.after = func(r corpusResult) {
				if !strings.Contains(r.stderr, "note: management API unavailable") || !strings.Contains(r.stderr, "(enable rabbitmq_management or pass --management-url)") {
					b.t.Errorf("list without the API does not say it, with the flag that mends it: %q", r.stderr)
				}
			}
			return []string{"--management-url", "http://" + u.user + ":" + pw + "@127.0.0.1:1", "list", q}
		}},
		{name: "management-down-dry-run-says-preview-unavailable", code: 0, out: "route preview unavailable: management API unavailable", setup: func(b *bx) []string {
			q := dlq(b, 2)
			dst := b.queue("dst", nil)
			return []string{"--management-url", "http://" + u.user + ":" + pw + "@127.0.0.1:1", "replay", q, "--all", "--to", ":" + dst, "--dry-run"}
		}},
		{name: "management-down-replay-works", code: 0, out: "replayed 2 message(s)", setup: func(b *bx) []string {
			q := dlq(b, 2)
			dst := b.queue("dst", nil)
			b.expect(q, -2)
			b.expect(dst, 2)
			return []string{"--management-url", "http://" + u.user + ":" + pw + "@127.0.0.1:1", "replay", q, "--all", "--to", ":" + dst, "--yes"}
		}},
		{name: "management-401-queues", code: 1, want: `refused the credentials of user "` + u.user + `"`, setup: func(b *bx) []string {
			return []string{"--management-url", brokertest.ManagementURLFor(u.user, u.wrong), "queues"}
		}},
		{name: "management-401-list-works", code: 0, out: idOf(1), setup: func(b *bx) []string {
			q := dlq(b, 2)
			b.after = func(r corpusResult) {
				if !strings.Contains(r.stderr, "refused the credentials") {
					b.t.Errorf("list with a refused API password does not say it: %q", r.stderr)
				}
			}
			return []string{"--management-url", brokertest.ManagementURLFor(u.user, u.wrong), "list", q}
		}},

		// ---- what is not there
		{name: "missing-queue-list", code: 1, want: `no queue "`, setup: func(b *bx) []string {
			return []string{"list", brokertest.Name(b.t, "absent")}
		}},
		{name: "missing-queue-show", code: 1, want: `" in vhost "/"`, setup: func(b *bx) []string {
			return []string{"show", brokertest.Name(b.t, "absent"), "m-1"}
		}},
		{name: "missing-queue-replay", code: 1, want: `no queue "`, setup: func(b *bx) []string {
			return []string{"replay", brokertest.Name(b.t, "absent"), "--all", "--to", ":x", "--yes"}
		}},
		{name: "missing-queue-delete", code: 1, want: `no queue "`, setup: func(b *bx) []string {
			return []string{"delete", brokertest.Name(b.t, "absent"), "--all", "--yes"}
		}},
		{name: "missing-queue-export", code: 1, want: `no queue "`, setup: func(b *bx) []string {
			return []string{"export", brokertest.Name(b.t, "absent"), "--file", filepath.Join(b.dir, "out.jsonl")}
		}},
		{name: "missing-exchange-replay-stays-parked", code: 3, want: `2 message(s) not done, 0 done: exchange "`, out: `does not exist in vhost "/"`, setup: func(b *bx) []string {
			q := dlq(b, 2)
			return []string{"replay", q, "--all", "--to", brokertest.Name(b.t, "nope") + ":rk", "--yes"}
		}},
		{name: "show-id-not-there", code: 1, want: `no message "nothere" in queue "`, setup: func(b *bx) []string {
			return []string{"show", dlq(b, 2), "nothere"}
		}},
		{name: "replay-id-not-there", code: 3, want: `1 message(s) not done, 0 done: no message "nothere"`, setup: func(b *bx) []string {
			q := dlq(b, 1)
			return []string{"replay", q, "--id", "nothere", "--to", ":" + q, "--yes"}
		}},

		// ---- a queue of the wrong type
		{name: "stream-queue-list", code: 1, want: "it is a stream; parkinglot browses classic and quorum queues", setup: func(b *bx) []string {
			q := b.queue("stream", amqp.Table{"x-queue-type": "stream"})
			b.parkText(q, 2)
			brokertest.WaitDepth(b.t, q, 2, 15*time.Second) // a stream's count lags its publishes
			return []string{"list", q}
		}},
		{name: "stream-queue-replay", code: 1, want: "it is a stream", setup: func(b *bx) []string {
			q := b.queue("stream", amqp.Table{"x-queue-type": "stream"})
			b.parkText(q, 1)
			brokertest.WaitDepth(b.t, q, 1, 15*time.Second) // a stream's count lags its publishes
			return []string{"replay", q, "--all", "--to", ":x", "--yes"}
		}},
		{name: "stream-queue-list-without-management", code: 1, want: "ready but the broker delivered none", setup: func(b *bx) []string {
			q := b.queue("stream", amqp.Table{"x-queue-type": "stream"})
			b.parkText(q, 1)
			brokertest.WaitDepth(b.t, q, 1, 15*time.Second) // a stream's count lags its publishes
			return []string{"--management-url", "http://127.0.0.1:1", "list", q}
		}},

		// ---- bodies
		{name: "binary-body-show-hex-dump", code: 0, out: "00000000  00 01 02 ff fe 80 61 62  00 00", setup: func(b *bx) []string {
			q := b.queue("dlq", nil)
			b.park(q, amqp.Publishing{MessageId: "bin", ContentType: "application/octet-stream", Body: []byte{0, 1, 2, 0xff, 0xfe, 0x80, 'a', 'b', 0, 0}})
			return []string{"show", q, "bin"}
		}},
		{name: "non-utf8-body-list-and-show", code: 0, out: "latin1", setup: func(b *bx) []string {
			q := b.queue("dlq", nil)
			b.park(q, amqp.Publishing{MessageId: "latin1", ContentType: "text/plain", Body: []byte("caf\xe9 cr\xe8me")})
			b.after = func(r corpusResult) {
				s := b.then(0, "", "show", q, "latin1")
				if !strings.Contains(s.stdout, "63 61 66 e9 20 63 72 e8") || !utf8.ValidString(s.stdout) {
					b.t.Errorf("show of a Latin-1 body: want a hex dump and valid UTF-8 output:\n%s", s.stdout)
				}
			}
			return []string{"list", q}
		}},
		{name: "binary-body-export-base64-file-0600", code: 0, want: "", setup: func(b *bx) []string {
			q := b.queue("dlq", nil)
			b.park(q, amqp.Publishing{MessageId: "bin", Body: []byte{0, 0xff, 0x80}}, amqp.Publishing{MessageId: "latin1", Body: []byte("caf\xe9")})
			file := filepath.Join(b.dir, "export.jsonl")
			b.after = func(r corpusResult) {
				fi, err := os.Stat(file)
				if err != nil || fi.Mode().Perm() != 0o600 {
					b.t.Fatalf("export file: %v, mode %v; want 0600", err, fi.Mode().Perm())
				}
				data, _ := os.ReadFile(file)
				lines := jsonLines(b.t, string(data))
				if len(lines) != 2 || !strings.Contains(string(data), `"body_encoding":"base64"`) {
					b.t.Errorf("export: want 2 lines with base64 bodies:\n%s", data)
				}
			}
			return []string{"export", q, "--file", file}
		}},
		{name: "body-16MiB-show-cuts-it", code: 0, out: "… (first 65536 of 16777216 bytes shown; export the message for all of it)", setup: func(b *bx) []string {
			q := b.queue("dlq", nil)
			b.park(q, amqp.Publishing{MessageId: "big", ContentType: "text/plain", Body: bytes.Repeat([]byte("0123456789abcdef"), 1<<20)})
			b.after = func(r corpusResult) {
				if len(r.stdout) > 100<<10 {
					b.t.Errorf("show printed %d bytes of a 16 MiB body", len(r.stdout))
				}
			}
			return []string{"show", q, "big"}
		}},
		{name: "body-16MiB-export-import-round-trip", code: 0, setup: func(b *bx) []string {
			q := b.queue("dlq", nil)
			body := make([]byte, 16<<20)
			for i := range body {
				body[i] = byte(i * 7 % 251) // not UTF-8: base64 in the export
			}
			b.park(q, amqp.Publishing{MessageId: "big", ContentType: "application/octet-stream", Body: body, Headers: amqp.Table{"x-last-error": "too big"}})
			dst := b.queue("dst", nil)
			b.expect(dst, 1)
			file := filepath.Join(b.dir, "big.jsonl")
			b.after = func(r corpusResult) {
				b.then(0, "", "import", file, "--to", ":"+dst, "--yes")
				got := b.peek(dst)
				if len(got) != 1 || !bytes.Equal(got[0].Body, body) || got[0].MessageId != "big" || got[0].Headers["x-last-error"] != "too big" {
					b.t.Errorf("the imported copy is not the exported 16 MiB message (%d messages)", len(got))
				}
			}
			return []string{"export", q, "--file", file}
		}},

		// ---- headers
		{name: "headers-every-amqp-type-show", code: 0, setup: func(b *bx) []string {
			q := b.queue("dlq", nil)
			b.park(q, amqp.Publishing{MessageId: "types", Body: []byte("x"), Headers: allTypes()})
			b.after = func(r corpusResult) {
				for _, typ := range []string{"bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "float32", "float64", "decimal", "string", "bytes", "timestamp", "void", "table", "array"} {
					if !strings.Contains(r.stdout, " "+typ+" ") {
						b.t.Errorf("show lacks a header of type %s:\n%s", typ, r.stdout)
					}
				}
			}
			return []string{"show", q, "types"}
		}},
		{name: "headers-every-amqp-type-export-import-lossless", code: 0, setup: func(b *bx) []string {
			q := b.queue("dlq", nil)
			b.park(q, amqp.Publishing{MessageId: "types", Body: []byte("x"), Headers: allTypes()})
			dst := b.queue("dst", nil)
			b.expect(dst, 1)
			file := filepath.Join(b.dir, "types.jsonl")
			b.after = func(r corpusResult) {
				b.then(0, "", "import", file, "--to", ":"+dst, "--yes")
				orig, cp := b.peek(q), b.peek(dst)
				if len(orig) != 1 || len(cp) != 1 {
					b.t.Fatalf("%d parked, %d imported; want 1 and 1", len(orig), len(cp))
				}
				if a, c := headerString(orig[0].Headers), headerString(cp[0].Headers); a != c {
					b.t.Errorf("typed headers changed on the way:\nparked:\n%s\nimported:\n%s", a, c)
				}
			}
			return []string{"export", q, "--file", file}
		}},
		{name: "headers-nested-10-deep-show-and-json", code: 0, out: "level", setup: func(b *bx) []string {
			q := b.queue("dlq", nil)
			b.park(q, amqp.Publishing{MessageId: "deep", Body: []byte("x"), Headers: amqp.Table{"deep": nested(10), "wide": []any{nested(9), nested(10)}}})
			b.after = func(r corpusResult) {
				s := b.then(0, "", "show", q, "deep", "-o", "json")
				if ls := jsonLines(b.t, s.stdout); len(ls) != 1 {
					b.t.Errorf("show -o json: %d lines, want 1", len(ls))
				}
			}
			return []string{"show", q, "deep"}
		}},
		{name: "x-death-count-is-a-string", code: 0, out: "x-death entry 0: count is a string", setup: func(b *bx) []string {
			q := b.queue("dlq", nil)
			b.park(q, amqp.Publishing{MessageId: "d", Body: []byte("x"), Headers: amqp.Table{"x-death": []any{amqp.Table{"count": "three", "reason": "rejected", "queue": "q"}}}})
			return []string{"show", q, "d"}
		}},
		{name: "x-death-table-not-array", code: 0, out: "x-death is a table, not an array of tables", setup: func(b *bx) []string {
			q := b.queue("dlq", nil)
			b.park(q, amqp.Publishing{MessageId: "d", Body: []byte("x"), Headers: amqp.Table{"x-death": amqp.Table{"count": int64(2), "reason": "rejected", "queue": "q"}}})
			return []string{"show", q, "d"}
		}},
		{name: "x-death-1000-entries", code: 0, out: "x-death has 1000 entries", setup: func(b *bx) []string {
			q := b.queue("dlq", nil)
			b.park(q, amqp.Publishing{MessageId: "d", Body: []byte("x"), Headers: amqp.Table{"x-death": deaths(1000)}})
			b.after = func(r corpusResult) {
				s := b.then(0, "", "list", q, "-o", "json")
				if ls := jsonLines(b.t, s.stdout); len(ls) != 1 {
					b.t.Errorf("list -o json: %d lines, want 1", len(ls))
				}
			}
			return []string{"show", q, "d"}
		}},
		{name: "invalid-utf8-header-values-list-json", code: 0, setup: func(b *bx) []string {
			q := b.queue("dlq", nil)
			b.park(q,
				amqp.Publishing{MessageId: "bad-value", Body: []byte("x"), Headers: amqp.Table{"x-last-error": "bad \xff\xfe byte", "tenant": "\xc3\x28"}},
				amqp.Publishing{MessageId: "fine", Body: []byte("y"), Headers: amqp.Table{"x-last-error": "ok"}})
			b.after = func(r corpusResult) {
				if ls := jsonLines(b.t, r.stdout); len(ls) != 2 {
					b.t.Errorf("list -o json: %d lines, want one per message", len(ls))
				}
			}
			return []string{"list", q, "-o", "json"}
		}},
		{name: "invalid-utf8-header-name-show-json-clear-error", code: 1, want: `header name "k\xffey" is not valid UTF-8`, setup: func(b *bx) []string {
			q := b.queue("dlq", nil)
			b.park(q, amqp.Publishing{MessageId: "bad-name", Body: []byte("x"), Headers: amqp.Table{"k\xffey": "v"}})
			return []string{"show", q, "bad-name", "-o", "json"}
		}},
		{name: "invalid-utf8-header-name-export-per-message", code: 3, want: "1 message(s) not done, 1 done", out: `not done: bad-name: `, setup: func(b *bx) []string {
			q := b.queue("dlq", nil)
			b.park(q, amqp.Publishing{MessageId: "bad-name", Body: []byte("x"), Headers: amqp.Table{"k\xffey": "v"}},
				amqp.Publishing{MessageId: "fine", Body: []byte("y")})
			return []string{"export", q, "--file", filepath.Join(b.dir, "out.jsonl")}
		}},
		{name: "terminal-escapes-in-error-header-not-shown", code: 0, out: "red alert", setup: func(b *bx) []string {
			q := b.queue("dlq", nil)
			b.park(q, amqp.Publishing{MessageId: "esc", Body: []byte("x"), Headers: amqp.Table{"x-last-error": "\x1b[31mred alert\x1b[0m\x1b]0;pwned\x07"}})
			b.after = func(r corpusResult) {
				s := b.then(0, "", "show", q, "esc")
				for _, o := range []string{r.stdout, s.stdout} {
					if strings.ContainsRune(o, 0x1b) || strings.ContainsRune(o, 0x07) {
						b.t.Errorf("a terminal escape reached the output: %q", o)
					}
				}
			}
			return []string{"list", q}
		}},
		{name: "no-message-id-content-id-show-and-replay", code: 0, out: "replayed 1 message(s)", setup: func(b *bx) []string {
			q := b.queue("dlq", nil)
			dst := b.queue("dst", nil)
			b.park(q, amqp.Publishing{Body: []byte("anonymous"), Headers: amqp.Table{"x-last-error": "boom"}})
			l := b.then(0, "", "list", q, "-o", "json")
			ls := jsonLines(b.t, l.stdout)
			id, _ := ls[0]["id"].(string)
			if len(ls) != 1 || !strings.HasPrefix(id, "sha256:") {
				b.t.Fatalf("list: want one message with a sha256: content id, got %v", ls)
			}
			s := b.then(0, "", "show", q, id)
			if !strings.Contains(s.stdout, "Message   "+id) {
				b.t.Errorf("show %s:\n%s", id, s.stdout)
			}
			b.expect(q, -1)
			b.expect(dst, 1)
			return []string{"replay", q, "--id", id, "--to", ":" + dst, "--yes"}
		}},

		// ---- pipeline files
		{name: "pipeline-unknown-key", code: 2, want: `unknown key "max_retry"`, setup: func(b *bx) []string {
			return []string{"topology", "declare", "-f", b.file("p.yaml", pipelineText("x", "max_retry: 3\n"), 0o600)}
		}},
		{name: "pipeline-negative-delay", code: 2, want: "retry.delays: -5s is not a positive delay", setup: func(b *bx) []string {
			return []string{"topology", "declare", "-f", b.file("p.yaml", strings.Replace(pipelineText("x", ""), "[1s]", "[-5s]", 1), 0o600)}
		}},
		{name: "pipeline-zero-retries", code: 2, want: "max_retries is 0", setup: func(b *bx) []string {
			return []string{"daemon", "-f", b.file("p.yaml", pipelineText("x", "max_retries: 0\n"), 0o600), "--exec", "true"}
		}},
		{name: "pipeline-missing-file", code: 2, want: "open /nonexistent/pipeline.yaml: no such file", setup: func(b *bx) []string {
			return []string{"topology", "declare", "-f", "/nonexistent/pipeline.yaml"}
		}},
		{name: "pipeline-not-yaml", code: 2, want: "invalid pipeline: line 1: did not find expected", setup: func(b *bx) []string {
			return []string{"topology", "declare", "-f", b.file("p.yaml", "this is: [not yaml\n", 0o600)}
		}},
		{name: "pipeline-plain-text", code: 2, want: "not a pipeline", setup: func(b *bx) []string {
			return []string{"topology", "declare", "-f", b.file("p.yaml", "hello world\n", 0o600)}
		}},

		// ---- the daemon's exec handler
		{name: "exec-handler-missing", code: 1, want: `exec handler "/nonexistent/handler.sh": no such file`, setup: func(b *bx) []string {
			return []string{"daemon", "-f", b.file("p.yaml", pipelineText("x", ""), 0o600), "--exec", "/nonexistent/handler.sh"}
		}},
		{name: "exec-handler-not-executable", code: 1, want: "not executable (chmod +x it)", setup: func(b *bx) []string {
			h := b.file("handler.sh", "#!/bin/sh\nexit 0\n", 0o644)
			return []string{"daemon", "-f", b.file("p.yaml", pipelineText("x", ""), 0o600), "--exec", h}
		}},
		{name: "exec-handler-prints-megabytes-to-stderr", code: 0, logs: true, setup: func(b *bx) []string {
			p := b.pipeline(1, "10s")
			h := b.script("handler.sh", `case "$(cat)" in
lines) yes "noise noise noise noise noise noise noise noise noise noise noise" | head -n 40000 >&2; echo "cannot parse order 7: amount is not a number" >&2; exit 65;;
oneline) head -c 3000000 /dev/zero | tr '\0' y >&2; exit 65;;
esac
exit 0`)
			brokertest.PublishMany(b.t, b.ch, p.mainEx, p.mainKey, []amqp.Publishing{{MessageId: "lines", Body: []byte("lines")}, {MessageId: "oneline", Body: []byte("oneline")}})
			b.expect(p.mainQ, -2)
			b.expect(p.parking, 2)
			b.until = func() bool { return brokertest.Depth(b.t, b.ch, p.parking) == 2 }
			b.after = func(r corpusResult) {
				for _, d := range b.peek(p.parking) {
					e, _ := d.Headers["x-last-error"].(string)
					if strings.ContainsAny(e, "\r\n") || len(e) > 1024 {
						b.t.Errorf("%s: x-last-error is %d bytes or more than one line", d.MessageId, len(e))
					}
					if d.MessageId == "lines" && e != "cannot parse order 7: amount is not a number" {
						b.t.Errorf("lines: x-last-error %q, want the last stderr line", e)
					}
					if d.MessageId == "oneline" && (!strings.HasPrefix(e, "yyyy") || !strings.HasSuffix(e, "…")) {
						b.t.Errorf("oneline: x-last-error %q…, want the line cut with …", e[:min(len(e), 40)])
					}
				}
			}
			return []string{"daemon", "-f", p.file, "--exec", h}
		}},
		{name: "exec-handler-hangs-times-out-transient", code: 0, logs: true, setup: func(b *bx) []string {
			p := b.pipeline(1, "1s")
			h := b.script("handler.sh", "exec sleep 60")
			brokertest.Publish(b.t, b.ch, p.mainEx, p.mainKey, amqp.Publishing{MessageId: "slow", Body: []byte("x")})
			b.expect(p.mainQ, -1)
			b.expect(p.parking, 1)
			b.until = func() bool { return brokertest.Depth(b.t, b.ch, p.parking) == 1 }
			b.after = func(r corpusResult) {
				got := b.peek(p.parking)
				if len(got) != 1 {
					b.t.Fatalf("%d parked, want 1", len(got))
				}
				h := got[0].Headers
				// transient: retried once (max_retries 1), then parked as exhausted
				if e, _ := h["x-last-error"].(string); !strings.Contains(e, "timed out after 1s") || h["x-failure-kind"] != "retries-exhausted" || h["x-retry-count"] != int32(1) {
					b.t.Errorf("parked headers %v: want a timeout, retried once, retries-exhausted", h)
				}
			}
			return []string{"daemon", "-f", p.file, "--exec", h}
		}},
		{name: "exec-handler-stderr-terminal-escapes-stripped", code: 0, logs: true, setup: func(b *bx) []string {
			p := b.pipeline(1, "10s")
			h := b.script("handler.sh", `cat >/dev/null; printf '\033[31mbad\033[0m \377 order\n' >&2; exit 65`)
			brokertest.Publish(b.t, b.ch, p.mainEx, p.mainKey, amqp.Publishing{MessageId: "esc", Body: []byte("x")})
			b.expect(p.mainQ, -1)
			b.expect(p.parking, 1)
			b.until = func() bool { return brokertest.Depth(b.t, b.ch, p.parking) == 1 }
			b.after = func(r corpusResult) {
				for _, d := range b.peek(p.parking) {
					if e, _ := d.Headers["x-last-error"].(string); e != "bad \uFFFD order" {
						b.t.Errorf("x-last-error %q, want the text without escapes, as valid UTF-8", e)
					}
				}
			}
			return []string{"daemon", "-f", p.file, "--exec", h}
		}},

		// ---- $EDITOR
		{name: "editor-unset", code: 1, want: "editor: none set, and vi needs a terminal: set $VISUAL or $EDITOR; nothing changed", setup: func(b *bx) []string { // no terminal: no vi fallback
			q := jsonParked(b)
			b.env("VISUAL=", "EDITOR=", "PATH="+b.t.TempDir())
			return []string{"edit", q, "order-7", "--to", ":" + q, "--yes"}
		}},
		{name: "editor-not-found", code: 1, want: `editor "/nonexistent/editor" not found; nothing changed`, setup: func(b *bx) []string {
			q := jsonParked(b)
			b.env("VISUAL=", "EDITOR=/nonexistent/editor")
			return []string{"edit", q, "order-7", "--to", ":" + q, "--yes"}
		}},
		{name: "editor-exits-non-zero", code: 1, want: "exited with status 3; nothing changed", setup: func(b *bx) []string {
			q := jsonParked(b)
			b.env("VISUAL=", "EDITOR="+b.script("editor.sh", "exit 3"))
			return []string{"edit", q, "order-7", "--to", ":" + q, "--yes"}
		}},

		// ---- import files
		{name: "import-truncated", code: 1, want: "line 2: not JSON (unexpected end of JSON input): the file looks truncated; nothing was published", setup: func(b *bx) []string {
			line := oneExport(b)
			return []string{"import", exportFile(b, line, line[:len(line)/2]), "--yes"}
		}},
		{name: "import-not-json", code: 1, want: "line 1: not JSON: invalid character 'h'", setup: func(b *bx) []string {
			return []string{"import", exportFile(b, "hello world\n"), "--yes"}
		}},
		{name: "import-json-array", code: 1, want: "not an exported message: a JSON array where an object belongs", setup: func(b *bx) []string {
			return []string{"import", exportFile(b, "[1,2]\n"), "--yes"}
		}},
		{name: "import-wrong-field-type", code: 1, want: `"properties.message_id" is a JSON number; want text`, setup: func(b *bx) []string {
			return []string{"import", exportFile(b, `{"queue":"x","message":{"properties":{"message_id":5}}}`+"\n"), "--yes"}
		}},
		{name: "import-empty-file", code: 1, want: "no messages in it (an empty file); nothing was published", setup: func(b *bx) []string {
			return []string{"import", exportFile(b), "--yes"}
		}},
		{name: "import-directory", code: 1, want: "is a directory", setup: func(b *bx) []string {
			return []string{"import", b.dir, "--yes"}
		}},

		// ---- a destination that refuses
		{name: "replay-nacked-by-full-queue-stays-parked", code: 3, want: "2 message(s) not done, 0 done: ", out: "the broker refused the copy (nack)", setup: func(b *bx) []string {
			q := dlq(b, 2)
			full := b.queue("full", amqp.Table{"x-max-length": int32(1), "x-overflow": "reject-publish"})
			b.park(full, amqp.Publishing{Body: []byte("filler")})
			return []string{"replay", q, "--all", "--to", ":" + full, "--yes"}
		}},

		// ---- command-line use (exit 2)
		{name: "bad-filter", code: 2, want: `bad filter "error =="`, setup: func(b *bx) []string {
			return []string{"list", dlq(b, 1), "--filter", "error =="}
		}},
		{name: "id-and-all", code: 2, want: "--id, --all or --filter are mutually exclusive", setup: func(b *bx) []string {
			return []string{"replay", dlq(b, 1), "--id", idOf(0), "--all", "--yes"}
		}},
		{name: "unknown-flag", code: 2, want: "unknown flag: --bogus", setup: func(b *bx) []string {
			return []string{"list", "q", "--bogus"}
		}},
		{name: "unknown-command", code: 2, want: `unknown command "bogus" (parkinglot --help lists them)`, setup: func(b *bx) []string {
			return []string{"bogus"}
		}},
		{name: "unknown-command-suggested", code: 2, want: `unknown command "lsit"; did you mean "list"?`, setup: func(b *bx) []string {
			return []string{"lsit", "q"}
		}},
		{name: "output-yaml", code: 2, want: `-o "yaml": use text or json`, setup: func(b *bx) []string {
			return []string{"list", "q", "-o", "yaml"}
		}},
		{name: "rate-negative", code: 2, want: "--rate -1: want 0.001 messages per second or more", setup: func(b *bx) []string {
			q := dlq(b, 1)
			return []string{"replay", q, "--all", "--to", ":" + q, "--rate", "-1", "--yes"}
		}},
		{name: "import-rate-negative", code: 2, want: "--rate -1: want 0.001 messages per second or more", setup: func(b *bx) []string {
			return []string{"import", exportFile(b, oneExport(b)), "--rate", "-1", "--yes"}
		}},
		{name: "window-negative", code: 2, want: "--window -1: want 1 or more", setup: func(b *bx) []string {
			q := dlq(b, 1)
			return []string{"replay", q, "--all", "--to", ":" + q, "--window", "-1", "--yes"}
		}},
		{name: "limit-not-a-number", code: 2, want: `invalid argument "ten" for "--limit" flag: want a whole number`, setup: func(b *bx) []string {
			return []string{"list", "q", "--limit", "ten"}
		}},
		{name: "to-without-colon", code: 2, want: `--to destination "orders": want EXCHANGE:ROUTING_KEY`, setup: func(b *bx) []string {
			return []string{"replay", dlq(b, 1), "--all", "--to", "orders", "--yes"}
		}},
		{name: "replay-without-terminal-or-yes-changes-nothing", code: 2, want: "nothing changed: pass --yes", out: "2 message(s) in ", setup: func(b *bx) []string {
			q := dlq(b, 2)
			dst := b.queue("dst", nil)
			return []string{"replay", q, "--all", "--to", ":" + dst}
		}},

		// ---- the config file
		{name: "config-unknown-key", code: 2, want: `line 3: unknown key "colour" in a context (known: url, management_url, vhost, tls, password_file, password_command)`, setup: func(b *bx) []string {
			return []string{"--config", b.file("config.yaml", "contexts:\n  prod:\n    colour: red\n", 0o600), "list", "q"}
		}},
		{name: "config-not-a-number", code: 2, want: `"fast" is not a number`, setup: func(b *bx) []string {
			return []string{"--config", b.file("config.yaml", "parking_lots:\n  q: {rate: fast}\n", 0o600), "list", "q"}
		}},
		{name: "config-decode-bad-format", code: 2, want: `decode.queues[0].format "xml": want protobuf, avro, msgpack or json`, setup: func(b *bx) []string {
			return []string{"--config", b.file("config.yaml", "decode:\n  queues:\n    - {queue: q, format: xml}\n", 0o600), "list", "q"}
		}},
		{name: "proto-file-missing", code: 2, want: "schema: ", setup: func(b *bx) []string {
			return []string{"--proto", "/nonexistent/shop.proto", "list", "q"}
		}},
		{name: "proto-file-broken", code: 2, want: "syntax error", setup: func(b *bx) []string {
			return []string{"--proto", b.file("broken.proto", "syntax = \"proto3\";\nmessage {\n", 0o600), "list", "q"}
		}},
		{name: "avro-schema-broken", code: 2, want: "schema ", setup: func(b *bx) []string {
			return []string{"--avro-schema", b.file("broken.avsc", `{"type": "record", "name": "X", "fields": [{"name": "a", "type": "nosuch"}]}`, 0o600), "list", "q"}
		}},
		{name: "unknown-context", code: 2, want: `no context "staging" in the config (known: prod)`, setup: func(b *bx) []string {
			cfg := b.file("config.yaml", "contexts:\n  prod: {url: \""+u.url()+"\"}\n", 0o600)
			return []string{"--config", cfg, "--context", "staging", "list", "q"}
		}},
	}
}

// TestEditAndExportFilesArePrivate checks what edit_test.go does not: the
// draft $EDITOR opens is mode 0600 in $TMPDIR, and it is removed whether
// the edit is replayed, refused as invalid JSON or abandoned by a failing
// editor; and an export --remove file is 0600 too.
func TestEditAndExportFilesArePrivate(t *testing.T) {
	u := newCorpusUsers(t)
	for _, tc := range []struct {
		name   string
		action string // what the editor does after recording the draft
		code   int
		want   string
		sent   bool
	}{
		{"replayed", `printf '{"amount":12.5}' > "$1"`, 0, "", true},
		{"invalid-json", `printf '{"amount":' > "$1"`, 1, "not valid JSON", false},
		{"editor-fails", `exit 4`, 1, "exited with status 4; nothing changed", false},
	} {
		t.Run("edit-"+tc.name, func(t *testing.T) {
			t.Parallel()
			b := newBX(t, u)
			q := b.queue("dlq", nil)
			dst := b.queue("dst", nil)
			b.park(q, amqp.Publishing{MessageId: "order-7", ContentType: "application/json", Body: []byte(`{"amount":"12,50"}`)})
			record := filepath.Join(b.dir, "record")
			editor := b.script("editor.sh", `stat -c '%a %n' "$1" > '`+record+`'`+"\n"+tc.action)
			b.env("VISUAL=", "EDITOR="+editor)
			if tc.sent {
				b.expect(q, -1)
				b.expect(dst, 1)
			}
			b.snapshot()
			r := b.c.run("", "edit", q, "order-7", "--to", ":"+dst, "--yes")
			if r.code != tc.code {
				t.Errorf("edit: exit %d, want %d\n%s%s", r.code, tc.code, r.stdout, r.stderr)
			}
			b.checkOutput(r, tc.want, false)
			rec, err := os.ReadFile(record)
			if err != nil {
				t.Fatalf("the editor did not run: %v", err)
			}
			mode, path, _ := strings.Cut(strings.TrimSpace(string(rec)), " ")
			if mode != "600" {
				t.Errorf("the draft %s had mode %s, want 600", path, mode)
			}
			if filepath.Dir(path) != b.dir || !strings.HasPrefix(filepath.Base(path), "parkinglot-edit-") {
				t.Errorf("the draft %s is not a parkinglot-edit-* file in $TMPDIR %s", path, b.dir)
			}
			if _, err := os.Stat(path); !os.IsNotExist(err) {
				t.Errorf("the draft %s is still there after the edit (%v)", path, err)
			}
			b.conserved()
		})
	}
	t.Run("export-remove", func(t *testing.T) {
		t.Parallel()
		b := newBX(t, u)
		q := b.queue("dlq", nil)
		b.parkText(q, 3)
		b.expect(q, -3)
		b.snapshot()
		file := filepath.Join(b.dir, "removed.jsonl")
		r := b.c.run("", "export", q, "--file", file, "--remove", "--yes")
		if r.code != 0 {
			t.Fatalf("export --remove: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		b.checkOutput(r, "", false)
		fi, err := os.Stat(file)
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("export file: %v, mode %v; want 0600", err, fi.Mode().Perm())
		}
		data, _ := os.ReadFile(file)
		if n := len(jsonLines(t, string(data))); n != 3 {
			t.Errorf("export file holds %d messages, want the 3 removed", n)
		}
		b.conserved()
	})
}
