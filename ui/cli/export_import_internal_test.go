package cli

import (
	"context"
	"errors"
	"io/fs"
	"strings"
	"testing"

	"github.com/parkinglot/parkinglot/replay"
)

// existsError is the engine's refusal to export over a file: its text,
// wrapping fs.ErrExist.
type existsError string

func (e existsError) Error() string { return string(e) }
func (e existsError) Unwrap() error { return fs.ErrExist }

// `export --remove` says how many it exported and removed; an export over
// an existing file is refused in one line naming --file; an import of a
// bad file ends in the engine's one line naming the line, exit 1.
// (replay's round-trip tests export and import on a broker.)
func TestExportImportLines(t *testing.T) {
	const q, file = "orders.dlq", "/tmp/out.jsonl"
	s := &fakeSession{export: func(o replay.ExportOptions) (replay.Result, error) {
		if o.Queue != q || o.File != file || !o.Remove {
			t.Errorf("export options %+v", o)
		}
		return replay.Result{Done: 300}, nil
	}}
	f, b := fakeFactory(t, s)
	if code := run(context.Background(), f, []string{"export", q, "--file", file, "--remove", "--yes"}); code != 0 {
		t.Fatalf("export --remove: exit %d\nstderr %s", code, b.err.String())
	}
	if !strings.Contains(b.out.String(), "exported and removed 300 message(s)") {
		t.Errorf("export --remove output %q", b.out.String())
	}

	s = &fakeSession{export: func(replay.ExportOptions) (replay.Result, error) {
		return replay.Result{}, existsError("export: " + file + " already exists")
	}}
	f, b = fakeFactory(t, s)
	if code := run(context.Background(), f, []string{"export", q, "--file", file}); code != 1 {
		t.Fatalf("export over a file: exit %d, want 1\nstderr %s", code, b.err.String())
	}
	if want := "parkinglot: export: " + file + " already exists; choose another --file\n"; b.err.String() != want {
		t.Errorf("export over a file: stderr %q, want %q", b.err.String(), want)
	}

	const bad = "import: bad.jsonl: line 3: not JSON (unexpected end of JSON input); nothing published"
	s = &fakeSession{imp: func(o replay.ImportOptions) (replay.Result, error) {
		if o.File != "bad.jsonl" || o.To == nil || o.To.RoutingKey != q {
			t.Errorf("import options %+v", o)
		}
		return replay.Result{}, errors.New(bad)
	}}
	f, b = fakeFactory(t, s)
	if code := run(context.Background(), f, []string{"import", "bad.jsonl", "--yes", "--to", ":" + q}); code != 1 {
		t.Fatalf("import of a bad file: exit %d, want 1\nstderr %s", code, b.err.String())
	}
	if b.err.String() != "parkinglot: "+bad+"\n" {
		t.Errorf("import of a bad file: stderr %q, want the engine's line", b.err.String())
	}
}
