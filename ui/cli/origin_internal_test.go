package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parkinglot/parkinglot/replay"
	"github.com/parkinglot/parkinglot/retrycore"
)

// The config's per-parking-lot default reaches the session, and the
// replay says what it did. (replay's TestReplaySeed1ViaConfigDefault
// replays with it on a broker.)
func TestReplayConfigDefault(t *testing.T) {
	const q = "payments.parking"
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(cfg, []byte("parking_lots:\n  "+q+":\n    to: other.ex:audit\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := &fakeSession{replay: func(o replay.Options) (replay.Result, error) {
		if o.Queue != q || !o.Select.All {
			t.Errorf("replay options %+v", o)
		}
		return replay.Result{Done: 1}, nil
	}}
	f, b := fakeFactory(t, s)
	if code := run(context.Background(), f, []string{"--config", cfg, "replay", q, "--all", "--yes"}); code != 0 {
		t.Fatalf("exit %d\nstderr %s", code, b.err.String())
	}
	if got := f.Config.ParkingLots[q].To; got != "other.ex:audit" {
		t.Errorf("the session's config sends %s to %q, want other.ex:audit", q, got)
	}
	if !strings.Contains(b.out.String(), "replayed 1 message") {
		t.Errorf("output %q: want a count line", b.out.String())
	}
}

// A message nothing says the origin of is not done with the contract's
// sentence, exit 3.
func TestReplayUnknownOriginExit3(t *testing.T) {
	s := &fakeSession{replay: func(replay.Options) (replay.Result, error) {
		return replay.Result{Failed: 1, Failures: []replay.Failure{{ID: "lost-1", Err: retrycore.ErrUnknownOrigin.Error(), Code: replay.CodeUnknownOrigin}}}, nil
	}}
	f, b := fakeFactory(t, s)
	if code := run(context.Background(), f, []string{"replay", "orders.dlq", "--all", "--yes"}); code != 3 {
		t.Fatalf("exit %d, want 3\nstderr %s", code, b.err.String())
	}
	if !strings.Contains(b.out.String(), "lost-1: "+retrycore.ErrUnknownOrigin.Error()) {
		t.Errorf("output %q: want the refusal sentence for lost-1", b.out.String())
	}
}

// Refusals of a large parking lot are bounded: the text plan lists the
// first 50 and counts the rest, -o json lists every one, and the run
// lists the first MaxListedFailures and counts the rest, with the one
// reason on stderr. (replay's TestManyRefusalsAreCountedNotListed counts
// them on a broker.)
func TestManyRefusalsAreCountedNotListed(t *testing.T) {
	const q, n = "orders.dlq", replay.MaxListedFailures + 150
	refusal := func(i int) replay.Failure {
		return replay.Failure{ID: fmt.Sprintf("m-%05d", i), Err: retrycore.ErrUnknownOrigin.Error(), Code: replay.CodeUnknownOrigin}
	}
	var plan replay.Plan
	for i := range n {
		plan.Refused = append(plan.Refused, refusal(i))
	}
	dryRun := func(t *testing.T, args ...string) string {
		t.Helper()
		f, b := fakeFactory(t, &fakeSession{planEach: planOf(plan)})
		if code := run(context.Background(), f, append([]string{"replay", q, "--all", "--dry-run"}, args...)); code != 3 {
			t.Fatalf("exit %d, want 3\nstderr %s", code, b.err.String())
		}
		return b.out.String()
	}

	text := dryRun(t)
	if want := fmt.Sprintf("0 message(s) in %s to replay, %d refused", q, n); !strings.Contains(text, want) {
		t.Errorf("plan %q: want %q", text, want)
	}
	if got := strings.Count(text, "  refused "); got != 50 {
		t.Errorf("plan lists %d refusals, want the first 50", got)
	}
	if want := fmt.Sprintf("… and %d more refused", n-50); !strings.Contains(text, want) {
		t.Errorf("plan %q: want %q", text, want)
	}

	js := dryRun(t, "-o", "json")
	first, _, _ := strings.Cut(js, "\n")
	var p replay.Plan
	if err := json.Unmarshal([]byte(first), &p); err != nil {
		t.Fatalf("plan line %q: %v", first, err)
	}
	if len(p.Refused) != n || p.Refused[n-1].Err == "" {
		t.Errorf("-o json plan lists %d refusals, want all %d with their reason", len(p.Refused), n)
	}

	res := replay.Result{Failed: n}
	for i := range replay.MaxListedFailures {
		res.Failures = append(res.Failures, refusal(i))
	}
	f, b := fakeFactory(t, &fakeSession{replay: func(replay.Options) (replay.Result, error) { return res, nil }})
	if code := run(context.Background(), f, []string{"replay", q, "--all", "--yes"}); code != 3 {
		t.Fatalf("run: exit %d, want 3\nstderr %s", code, b.err.String())
	}
	if got := strings.Count(b.out.String(), "not done: "); got != replay.MaxListedFailures {
		t.Errorf("result lists %d failures, want the first %d", got, replay.MaxListedFailures)
	}
	if want := fmt.Sprintf("… and %d more not done", n-replay.MaxListedFailures); !strings.Contains(b.out.String(), want) {
		t.Errorf("result %q: want %q", b.out.String(), want)
	}
	if !strings.Contains(b.err.String(), retrycore.ErrUnknownOrigin.Error()) {
		t.Errorf("error line %q: want the one reason", b.err.String())
	}
}
