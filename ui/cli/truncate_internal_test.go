package cli

import (
	"context"
	"strings"
	"testing"

	"github.com/parkinglot/parkinglot/replay"
	"github.com/parkinglot/parkinglot/retrycore"
)

// The tables that cut columns (list, search, a removal's preview) cut
// nothing when piped, so `| grep` finds any word of an error; COLUMNS,
// when set, is their width wherever they print; a terminal is cut to its
// width, and --no-trunc cuts nothing there either.
func TestPipedTablesAreNotCut(t *testing.T) {
	const (
		origin = "payments.exchange.with.a.very.long.name"
		tail   = "THE-END-OF-THE-ERROR"
		queue  = "payments.error.dlq.of.a.long.named.service"
	)
	longErr := "ledger unavailable: " + strings.Repeat("upstream said no ", 12) + tail
	sums := []replay.Summary{{ID: "m-1", Facts: retrycore.Facts{Error: longErr},
		Origin: &retrycore.Origin{Destination: retrycore.Destination{Exchange: origin, RoutingKey: "payment.execute"}}}}
	browse := func(o replay.BrowseOptions) (*replay.Browse, error) {
		o.OnBatch(sums)
		return &replay.Browse{}, nil
	}
	search := func(o replay.SearchOptions) (*replay.SearchResult, error) {
		o.OnMatch(queue, sums[0])
		return &replay.SearchResult{Matched: 1, Queues: []replay.QueueSearch{{Queue: queue, Scanned: 1, Matched: 1}}}, nil
	}
	for _, tc := range []struct {
		name     string
		terminal int // 0: piped
		columns  string
		args     []string
		cut      int // 0: every row whole; else each row at most this wide and cut
	}{
		{"list piped", 0, "", []string{"list", "q"}, 0},
		{"list piped, COLUMNS", 0, "130", []string{"list", "q"}, 130},
		{"list on a terminal", 140, "", []string{"list", "q"}, 140},
		{"list on a terminal, COLUMNS first", 140, "150", []string{"list", "q"}, 150},
		{"list on a terminal, --no-trunc", 140, "", []string{"list", "q", "--no-trunc"}, 0},
		{"list piped, COLUMNS, --no-trunc", 0, "130", []string{"list", "q", "--no-trunc"}, 0},
		{"list piped, COLUMNS not a number", 0, "wide", []string{"list", "q"}, 0},
		{"search piped", 0, "", []string{"search", "ledger"}, 0},
		{"search piped, COLUMNS", 0, "130", []string{"search", "ledger"}, 130},
		{"search on a terminal", 140, "", []string{"search", "ledger"}, 140},
		{"search on a terminal, --no-trunc", 140, "", []string{"search", "ledger", "--no-trunc"}, 0},
		{"delete's preview piped", 0, "", []string{"delete", "q", "--all"}, 0},
		{"delete's preview on a terminal", 140, "", []string{"delete", "q", "--all"}, 140},
		{"delete's preview on a terminal, --no-trunc", 140, "", []string{"delete", "q", "--all", "--no-trunc"}, 0},
		{"export's preview on a terminal, --no-trunc", 140, "", []string{"export", "q", "--remove", "--file", "/nonexistent/x", "--no-trunc"}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, b := fakeFactory(t, &fakeSession{browse: browse, search: search})
			if tc.terminal > 0 {
				f.IOStreams.SetTerminal(true, tc.terminal)
				b.in.WriteString("n\n") // a removal asks: no
			}
			f.Getenv = func(k string) string {
				if k == "COLUMNS" {
					return tc.columns
				}
				return ""
			}
			code := run(context.Background(), f, tc.args)
			if want := map[string]int{"list": 0, "search": 0, "delete": 2, "export": 2}[tc.args[0]]; code != want {
				t.Fatalf("exit %d, want %d; stderr %q", code, want, b.err.String())
			}
			lines := strings.Split(strings.TrimRight(b.out.String(), "\n"), "\n")
			if len(lines) < 2 {
				t.Fatalf("stdout %q: want a header and a row", b.out.String())
			}
			row := lines[1]
			if tc.cut == 0 {
				other := origin // list's and a preview's ORIGIN, search's QUEUE
				if tc.args[0] == "search" {
					other = queue
				}
				if !strings.Contains(row, longErr) || !strings.Contains(row, other) {
					t.Errorf("row %q: want the whole error and %q", row, other)
				}
				return
			}
			if n := len([]rune(row)); n > tc.cut || !strings.HasSuffix(row, "…") || strings.Contains(row, tail) {
				t.Errorf("row %q (%d wide): want it cut to at most %d", row, n, tc.cut)
			}
		})
	}
}

// tableWidth's rule, alone.
func TestTableWidth(t *testing.T) {
	for _, tc := range []struct {
		terminal bool
		width    int
		columns  string
		noTrunc  bool
		want     int
	}{
		{false, 0, "", false, 0},
		{false, 0, "80", false, 80},
		{false, 0, "0", false, 0},
		{false, 0, "-5", false, 0},
		{true, 150, "", false, 150},
		{true, 0, "", false, defaultWidth}, // a terminal whose size cannot be read
		{true, 150, "70", false, 70},
		{true, 150, "70", true, 0},
	} {
		f, _ := testFactory(t)
		f.IOStreams.SetTerminal(tc.terminal, tc.width)
		f.Getenv = func(k string) string {
			if k == "COLUMNS" {
				return tc.columns
			}
			return ""
		}
		if got := f.tableWidth(tc.noTrunc); got != tc.want {
			t.Errorf("%+v: tableWidth %d, want %d", tc, got, tc.want)
		}
	}
}
