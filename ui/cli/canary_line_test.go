package cli

import (
	"testing"
	"time"

	"github.com/parkinglot/parkinglot/replay"
)

// TestCanaryLineSaysWhichStepsCopiesWereWatched: a later step's line
// counts the earlier steps' copies it watched too, and says so.
func TestCanaryLineSaysWhichStepsCopiesWereWatched(t *testing.T) {
	for _, c := range []struct {
		st   replay.CanaryStep
		want string
	}{
		{replay.CanaryStep{Step: 1, Replayed: 2, Watched: 2, Waited: 3 * time.Second},
			"canary step 1: 2 replayed, none came back in 3s"},
		{replay.CanaryStep{Step: 2, Replayed: 10, Watched: 11, Waited: time.Minute},
			"canary step 2: 10 replayed, none came back in 1m0s (nor any of the 1 before)"},
		{replay.CanaryStep{Step: 1, Replayed: 2, Watched: 2, CameBack: 2, Groups: map[string]int{"ledger down": 2}},
			"canary step 1: 2 of 2 came back: 2 × ledger down; the rest stay parked"},
		{replay.CanaryStep{Step: 2, Replayed: 10, Watched: 11, CameBack: 1, Groups: map[string]int{"ledger down": 1}},
			"canary step 2: 1 of 11 replayed by steps 1–2 came back: 1 × ledger down; the rest stay parked"},
	} {
		if got := canaryLine(c.st); got != c.want {
			t.Errorf("%+v:\n got %q\nwant %q", c.st, got, c.want)
		}
	}
}
