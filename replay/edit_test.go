//go:build integration

package replay_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker/brokertest"
)

// editorScript writes a shell script that replaces the edited file with
// body, standing in for $EDITOR.
func editorScript(t *testing.T, body string) string {
	t.Helper()
	dir := t.TempDir()
	src := filepath.Join(dir, "body")
	if err := os.WriteFile(src, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "editor.sh")
	script := "#!/bin/sh\ncat '" + src + "' > \"$1\"\n"
	if err := os.WriteFile(path, []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	return path
}

type editFixture struct {
	ch          *amqp.Channel
	q, dst, tmp string
	c           *cli
}

func newEditFixture(t *testing.T, editor string) editFixture {
	ch := brokertest.Channel(t)
	f := editFixture{ch: ch, q: brokertest.Name(t, "dlq"), dst: brokertest.Name(t, "dst"), tmp: t.TempDir(), c: newCLI(t)}
	brokertest.DeclareQueue(t, ch, f.q, nil)
	brokertest.DeclareQueue(t, ch, f.dst, nil)
	brokertest.Publish(t, ch, "", f.q, amqp.Publishing{MessageId: "order-7", ContentType: "application/json",
		Body: []byte(`{"amount":"12,50"}`), Headers: amqp.Table{"x-last-error": "amount is not a number", "x-original-exchange": "", "x-original-routing-key": f.dst}})
	f.c.Env = append(f.c.Env, "TMPDIR="+f.tmp, "VISUAL=", "EDITOR="+editor)
	return f
}

// tmpEmpty asserts the edit file was removed.
func (f editFixture) tmpEmpty(t *testing.T) {
	t.Helper()
	entries, _ := os.ReadDir(f.tmp)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "parkinglot-edit-") {
			t.Errorf("edit file %s left behind", e.Name())
		}
	}
}

func TestEditWithScriptedEditorReplaysEditedBody(t *testing.T) {
	f := newEditFixture(t, editorScript(t, `{"amount":12.5}`))
	r := f.c.must(0, "", "edit", f.q, "order-7", "--yes")
	if !strings.Contains(r.stdout, "replayed 1 message") {
		t.Errorf("edit output %q", r.stdout)
	}
	got := drainAll(t, f.ch, f.dst, 1)
	if len(got) != 1 {
		t.Fatalf("%d messages at the destination, want 1", len(got))
	}
	assertReplayed(t, got[0], "order-7", []byte(`{"amount":12.5}`))
	brokertest.WaitDepth(t, f.q, 0, 15*time.Second)
	f.tmpEmpty(t)
	es := auditEntries(t, f.c.audit)
	if len(es) != 1 || es[0].Action != "edit" || es[0].Result != "ok" || es[0].MessageID != "order-7" {
		t.Errorf("audit %+v: want one edit entry", es)
	}
}

func TestEditRefusesInvalidJSONNothingSent(t *testing.T) {
	f := newEditFixture(t, editorScript(t, `{"amount": 12.5,`))
	r := f.c.must(1, "", "edit", f.q, "order-7", "--yes")
	if !strings.Contains(r.stderr, "not valid JSON") || !strings.Contains(r.stderr, "line 1, column") || !strings.Contains(r.stderr, "still parked") {
		t.Errorf("stderr %q: want the JSON error with its position", r.stderr)
	}
	brokertest.WaitDepth(t, f.q, 1, 15*time.Second)
	if n := brokertest.Depth(t, f.ch, f.dst); n != 0 {
		t.Fatalf("an invalid edit sent %d messages", n)
	}
	f.tmpEmpty(t)
}

func TestEditEditorMissingOrFailingChangesNothing(t *testing.T) {
	for _, tc := range []struct{ name, editor, want string }{
		{"unset-no-terminal-refuses-vi", "", "set $VISUAL or $EDITOR"}, // no vi fallback without a terminal (nor vi on this PATH)
		{"not-found", "/nonexistent/editor", `editor "/nonexistent/editor" not found`},
		{"exits-1", "false", "exited with status 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newEditFixture(t, tc.editor)
			if tc.editor == "" {
				f.c.Env = append(f.c.Env, "PATH="+t.TempDir())
			}
			r := f.c.must(1, "", "edit", f.q, "order-7", "--yes")
			if !strings.Contains(r.stderr, tc.want) || !strings.Contains(r.stderr, "nothing changed") {
				t.Errorf("stderr %q: want %q and nothing changed", r.stderr, tc.want)
			}
			brokertest.WaitDepth(t, f.q, 1, 15*time.Second)
			if n := brokertest.Depth(t, f.ch, f.dst); n != 0 {
				t.Fatalf("sent %d messages", n)
			}
			f.tmpEmpty(t)
		})
	}
}
