package cli

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/parkinglot/parkinglot/replay"
)

func TestRunStatusTextAnswersWhatCameBack(t *testing.T) {
	at := time.Date(2026, 12, 5, 10, 2, 0, 0, time.UTC)
	st := replay.RunStatus{Run: "R1", Replayed: 500, From: []string{"pay.dlq"}, First: at, Last: at.Add(9 * time.Second),
		Watched: []string{"pay.dlq"}, CameBack: 3, Groups: map[string]int{"upstream ledger unavailable": 3}, SameError: 3}
	want := "run R1: 500 replayed from pay.dlq at 2026-12-05T10:02:00Z to 2026-12-05T10:02:09Z\n" +
		"3 came back to pay.dlq, all upstream ledger unavailable (3 with the same error as before)\n"
	if got := RunStatusText(st); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	st.Groups, st.SameError, st.Last = map[string]int{"timeout": 1, "ledger down": 2}, 2, at
	want = "run R1: 500 replayed from pay.dlq at 2026-12-05T10:02:00Z\n" +
		"3 came back to pay.dlq: 2 × ledger down; 1 × timeout (2 with the same error as before)\n"
	if got := RunStatusText(st); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	st.CameBack, st.Groups = 0, nil
	if got := RunStatusText(st); got != "run R1: 500 replayed from pay.dlq at 2026-12-05T10:02:00Z\nnone came back to pay.dlq\n" {
		t.Errorf("got\n%s", got)
	}
}

// TestReplayStatusAndCanaryUsage: --status goes alone (a QUEUE at most),
// replay without it still needs its QUEUE, and the canary's flags are
// checked before anything is dialled.
func TestReplayStatusAndCanaryUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		err  string
	}{
		{[]string{"replay"}, "accepts 1 arg(s), received 0"},
		{[]string{"replay", "--status", "R", "--all"}, "--status tells what became of a run and replays nothing; --all goes with a replay"},
		{[]string{"replay", "--status", "R", "a", "b"}, "--status RUN_ID [QUEUE]: at most one parking lot"},
		{[]string{"replay", "q", "--all", "--ramp", "10,1"}, "each step at least as large as the one before"},
		{[]string{"replay", "q", "--all", "--canary", "2", "--ramp", "1"}, "--canary and --ramp both say how to start"},
		{[]string{"replay", "q", "--all", "--canary", "2", "--dry-run"}, "a canary cannot be previewed"},
		{[]string{"replay", "q", "--all", "--canary-wait", "1m"}, "--canary-wait and --pipeline go with --canary or --ramp"},
		{[]string{"replay", "q", "--all", "--canary", "0"}, "--canary 0: want 1 or more messages"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			f, b := testFactory(t)
			f.ConfigPath = ""
			if code := run(context.Background(), f, tc.args); code != 2 || !strings.Contains(b.err.String(), tc.err) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", code, b.err.String(), tc.err)
			}
		})
	}
}
