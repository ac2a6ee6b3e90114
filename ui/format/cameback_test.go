package format

import (
	"testing"
	"time"

	"github.com/parkinglot/parkinglot/retrycore"
)

func TestCameBackMarks(t *testing.T) {
	now := time.Date(2026, 12, 5, 10, 5, 0, 0, time.UTC)
	at := now.Add(-3 * time.Minute)
	same, other := true, false
	cases := []struct {
		f           retrycore.Facts
		short, long string
	}{
		{retrycore.Facts{}, "-", ""},
		{retrycore.Facts{CameBack: true, ReplayID: "r-1", ReplayRun: "R1", ReplayCount: 1, ReplayedAt: at, SameError: &same},
			"1 same", "after 1 replay(s), the last 2026-12-05T10:02:00Z (3m0s ago), run R1, replay id r-1; the same error as before"},
		{retrycore.Facts{CameBack: true, ReplayID: "r-2", ReplayCount: 2, ReplayedAt: at, SameError: &other, ReplayedError: "ledger\x1b[31m down"},
			"2 other", "after 2 replay(s), the last 2026-12-05T10:02:00Z (3m0s ago), replay id r-2; another error than before: ledger down"},
		{retrycore.Facts{CameBack: true, ReplayID: "r-3"},
			"1", "after 1 replay(s), the last -, replay id r-3; the error before the replay is not known"},
	}
	for _, c := range cases {
		if got := CameBackShort(c.f); got != c.short {
			t.Errorf("short %q, want %q", got, c.short)
		}
		if got := CameBack(c.f, now); got != c.long {
			t.Errorf("long %q,\nwant %q", got, c.long)
		}
	}
}
