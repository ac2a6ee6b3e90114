package cli

import (
	"strings"
	"testing"
	"time"

	"github.com/parkinglot/parkinglot/replay"
	"github.com/parkinglot/parkinglot/retrycore"
)

// list and search print every id whole (it is pasted into show and --id):
// a UUID, and an id longer still. The columns after ID stay aligned with
// the header, and the error gives up the width.
func TestListAndSearchNeverCutIDs(t *testing.T) {
	const (
		uuid = "3f2a9c1e-4711-4b7d-9e0a-6c5d8f1b2a3c"
		long = "urn:orders:4711:3f2a9c1e-4711-4b7d-9e0a-6c5d8f1b2a3c:v2"
	)
	longErr := strings.Repeat("ledger down ", 20)
	col := func(t *testing.T, lines []string, name string) {
		t.Helper()
		at := strings.Index(lines[0], name)
		for _, l := range lines[1:] {
			if at < 0 || at > len(l) || l[at-1] != ' ' || l[at] == ' ' {
				t.Errorf("row %q: want a value under %s at %d (header %q)", l, name, at, lines[0])
			}
		}
	}
	whole := func(t *testing.T, lines []string, width int, ids ...string) {
		t.Helper()
		for i, id := range ids {
			if !strings.Contains(lines[i+1], id+" ") {
				t.Errorf("row %q lacks the whole id %q", lines[i+1], id)
			}
			if n := len([]rune(lines[i+1])); n > width {
				t.Errorf("row %q is %d wide, want at most %d: the error gives up the width", lines[i+1], n, width)
			}
		}
	}

	t.Run("list", func(t *testing.T) {
		var b strings.Builder
		tab := &SummaryTable{W: &b, Width: 160, Now: time.Now()}
		var sums []replay.Summary
		for _, id := range []string{uuid, long, "m-1"} {
			sums = append(sums, replay.Summary{ID: id, Facts: retrycore.Facts{Error: longErr}})
		}
		if err := tab.Write(sums[:2]); err != nil {
			t.Fatal(err)
		}
		if err := tab.Write(sums[2:]); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
		whole(t, lines, 160, uuid, long, "m-1")
		for _, c := range []string{"AGE", "BACK", "ORIGIN", "ERROR"} {
			col(t, lines, c)
		}
		// An id wider than the column set by the first batch still comes
		// whole; its row's error is shorter by as much.
		longer := long + ":retried-20261206"
		if err := tab.Write([]replay.Summary{{ID: longer, Facts: retrycore.Facts{Error: longErr}}}); err != nil {
			t.Fatal(err)
		}
		lines = strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
		whole(t, lines[len(lines)-2:], 160, longer)
	})

	t.Run("search", func(t *testing.T) {
		fake := &fakeSearcher{queues: map[string][]string{"a.dlq": {uuid, "o-4711"}}}
		out, errOut, code := runSearch(t, fake, "search", "4711")
		if code != ExitOK {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
		whole(t, lines, 120, uuid, "o-4711")
		for _, c := range []string{"ID", "AGE", "ERROR"} {
			col(t, lines, c)
		}
	})
}
