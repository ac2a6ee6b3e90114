package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/parkinglot/parkinglot/replay"
	"github.com/parkinglot/parkinglot/retrycore"
	"github.com/parkinglot/parkinglot/ui/iostreams"
)

// fakeSearcher answers a search from a fixed set of parked messages per
// queue, matching by id substring, and records what it was asked.
type fakeSearcher struct {
	queues map[string][]string // queue → ids
	broken string              // a queue that cannot be read
	asked  replay.SearchOptions
}

func (f *fakeSearcher) Search(_ context.Context, o replay.SearchOptions) (*replay.SearchResult, error) {
	f.asked = o
	res := &replay.SearchResult{}
	var err error
	for _, q := range []string{"a.dlq", "b.dlq", "c.dlq"} {
		qs := replay.QueueSearch{Queue: q, Scanned: len(f.queues[q])}
		if q == f.broken {
			qs.Err, err = errors.New("no leader"), replay.ErrSearchIncomplete
		}
		for _, id := range f.queues[q] {
			if strings.Contains(id, "4711") {
				qs.Matched++
				res.Matched++
				o.OnMatch(q, replay.Summary{ID: id, Facts: retrycore.Facts{Error: "ledger down\nagain"}, ParkedAt: time.Date(2026, 12, 5, 0, 0, 0, 0, time.UTC)})
			}
		}
		res.Queues = append(res.Queues, qs)
	}
	return res, err
}

func (f *fakeSearcher) Close() error { return nil }

func runSearch(t *testing.T, fake *fakeSearcher, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errOut bytes.Buffer
	f := NewFactory(&iostreams.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
	root := NewCmdRoot(f)
	for _, c := range root.Commands() {
		if c.Name() == "search" {
			root.RemoveCommand(c)
		}
	}
	root.AddCommand(NewCmdSearch(f, func(ctx context.Context, o *SearchOptions) error {
		o.Open = func(context.Context) (Searcher, error) { return fake, nil }
		o.Now = func() time.Time { return time.Date(2026, 12, 5, 0, 5, 0, 0, time.UTC) }
		return searchRun(ctx, o)
	}))
	root.SetArgs(append([]string{"--config", ""}, args...))
	root.SetOut(&out)
	root.SetErr(&errOut)
	err := root.ExecuteContext(context.Background())
	return out.String(), errOut.String(), ExitCode(err)
}

func TestSearchPrintsMatchesQueueByQueue(t *testing.T) {
	fake := &fakeSearcher{queues: map[string][]string{"a.dlq": {"o-4711", "o-1"}, "c.dlq": {"x-4711-2"}}}
	out, errOut, code := runSearch(t, fake, "search", "4711")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if fake.asked.Query.Text != "4711" || len(fake.asked.Queues) != 0 {
		t.Errorf("asked %+v, want the text 4711 over every parking lot", fake.asked)
	}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "QUEUE") || !strings.HasPrefix(lines[1], "a.dlq") || !strings.HasPrefix(lines[2], "c.dlq") {
		t.Fatalf("rows:\n%s", out)
	}
	if !strings.Contains(lines[1], "o-4711") || !strings.Contains(lines[1], "5m0s") || !strings.Contains(lines[1], "ledger down again") {
		t.Errorf("row %q: want id, age and the error on one line", lines[1])
	}
	if !strings.Contains(errOut, "2 match(es) in 2 of 3 queue(s); 3 message(s) looked at") {
		t.Errorf("summary: %q", errOut)
	}
}

func TestSearchJSONListsQueueAndID(t *testing.T) {
	fake := &fakeSearcher{queues: map[string][]string{"b.dlq": {"o-4711"}}}
	out, _, code := runSearch(t, fake, "-o", "json", "search", "id contains \"4711\"", "b.dlq")
	if code != ExitOK {
		t.Fatalf("exit %d", code)
	}
	if fake.asked.Query.Text != "" || fake.asked.Query.Filter != `id contains "4711"` || fmt.Sprint(fake.asked.Queues) != "[b.dlq]" {
		t.Errorf("asked %+v", fake.asked)
	}
	var m replay.SearchMatch
	if err := json.Unmarshal([]byte(out), &m); err != nil || m.Queue != "b.dlq" || m.Summary.ID != "o-4711" {
		t.Errorf("json %q: %+v %v", out, m, err)
	}
}

func TestSearchTextFlagAndUsage(t *testing.T) {
	fake := &fakeSearcher{}
	if _, _, code := runSearch(t, fake, "search", "--text", "attempts > 2"); code != ExitOK || fake.asked.Query.Text != "attempts > 2" {
		t.Errorf("--text: exit %d, asked %+v", code, fake.asked)
	}
	if _, _, code := runSearch(t, fake, "search"); code != ExitUsage {
		t.Errorf("no EXPR: exit %d, want %d", code, ExitUsage)
	}
}

func TestSearchAQueueThatCannotBeReadIsSaidAndExits1(t *testing.T) {
	fake := &fakeSearcher{queues: map[string][]string{"a.dlq": {"o-4711"}}, broken: "b.dlq"}
	out, errOut, code := runSearch(t, fake, "search", "4711")
	if code != ExitError || !strings.Contains(errOut, "b.dlq: not searched: no leader") || !strings.Contains(out, "o-4711") {
		t.Errorf("exit %d\nstdout %s\nstderr %s", code, out, errOut)
	}
}
