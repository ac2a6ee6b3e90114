package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/replay"
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

// editSession is a fake session holding one parked JSON message,
// order-7, whose draft is a file in dir, as the engine's PrepareEdit
// writes it; finished gets the body FinishEdit was given.
func editSession(t *testing.T, dir string, finished *[]byte) *fakeSession {
	original := broker.Message{Properties: broker.Properties{MessageID: "order-7", ContentType: "application/json"},
		Body: []byte(`{"amount":"12,50"}`), Headers: map[string]any{"x-last-error": "amount is not a number"}}
	return &fakeSession{
		prepareEdit: func(queue, id string) (*replay.EditDraft, error) {
			if id != "order-7" {
				return nil, notFoundError("no message " + id)
			}
			f, err := os.CreateTemp(dir, "parkinglot-edit-*.json")
			if err != nil {
				return nil, err
			}
			defer f.Close()
			if _, err := f.Write(original.Body); err != nil {
				return nil, err
			}
			return &replay.EditDraft{Queue: queue, ID: id, Path: f.Name(), ContentType: "application/json", Original: original,
				Summary: replay.Summary{ID: id}}, nil
		},
		finishEdit: func(d *replay.EditDraft, o replay.Options) (replay.Result, error) {
			defer func() { _ = d.Discard() }()
			body, err := d.Check()
			if err != nil {
				return replay.Result{}, err
			}
			*finished = body
			return replay.Result{Done: 1}, nil
		},
	}
}

// runEdit runs `edit Q order-7 --yes` with $EDITOR set to editor, and
// checks the draft's file is gone after it.
func runEdit(t *testing.T, editor string, wantCode int) (stdout, stderr string, finished []byte) {
	t.Helper()
	dir := t.TempDir()
	env := map[string]string{"EDITOR": editor}
	t.Setenv("VISUAL", "")
	t.Setenv("EDITOR", editor)
	f, b := fakeFactory(t, editSession(t, dir, &finished))
	f.Getenv = func(k string) string { return env[k] }
	if code := run(context.Background(), f, []string{"edit", "orders.dlq", "order-7", "--yes"}); code != wantCode {
		t.Fatalf("exit %d, want %d\nstdout %s\nstderr %s", code, wantCode, b.out.String(), b.err.String())
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		t.Errorf("edit file %s left behind", e.Name())
	}
	return b.out.String(), b.err.String(), finished
}

// The edited body goes to FinishEdit, and the command says it replayed
// it. (replay's edit tests replay drafts on a broker.)
func TestEditWithScriptedEditorReplaysEditedBody(t *testing.T) {
	stdout, _, body := runEdit(t, editorScript(t, `{"amount":12.5}`), 0)
	if string(body) != `{"amount":12.5}` {
		t.Errorf("FinishEdit got %q", body)
	}
	if !strings.Contains(stdout, "replayed 1 message") {
		t.Errorf("edit output %q", stdout)
	}
}

// A body that is not JSON any more is refused with its position; nothing
// is sent.
func TestEditRefusesInvalidJSONNothingSent(t *testing.T) {
	_, stderr, body := runEdit(t, editorScript(t, `{"amount": 12.5,`), 1)
	if !strings.Contains(stderr, "not valid JSON") || !strings.Contains(stderr, "line 1, column") || !strings.Contains(stderr, "still parked") {
		t.Errorf("stderr %q: want the JSON error with its position", stderr)
	}
	if body != nil {
		t.Errorf("an invalid edit reached FinishEdit with %q", body)
	}
}

// An editor that is not found or fails ends the command, exit 1, nothing
// changed.
func TestEditEditorMissingOrFailingChangesNothing(t *testing.T) {
	for _, tc := range []struct{ name, editor, want string }{
		{"not-found", "/nonexistent/editor", `editor "/nonexistent/editor" not found`},
		{"exits-1", "false", "exited with status 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, stderr, body := runEdit(t, tc.editor, 1)
			if !strings.Contains(stderr, tc.want) || !strings.Contains(stderr, "nothing changed") {
				t.Errorf("stderr %q: want %q and nothing changed", stderr, tc.want)
			}
			if body != nil {
				t.Errorf("FinishEdit got %q", body)
			}
		})
	}
}
