package format

import (
	"fmt"
	"strconv"
	"time"

	"github.com/parkinglot/parkinglot/retrycore"
)

// CameBack is the long mark of a parked message that came back after a
// replay, for `show` and the TUI's message screen, after the words "came
// back": "after 2 replay(s), the last 2026-12-05T10:02:00Z (3m ago), run
// 20261205T100200Z-3f2a, replay id r-1; the same error as before". "" when
// it did not come back.
func CameBack(f retrycore.Facts, now time.Time) string {
	if !f.CameBack {
		return ""
	}
	s := fmt.Sprintf("after %d replay(s), the last %s", max(f.ReplayCount, 1), TimeAgo(f.ReplayedAt, now))
	if f.ReplayRun != "" {
		s += ", run " + OneLine(f.ReplayRun)
	}
	s += ", replay id " + OneLine(f.ReplayID)
	switch {
	case f.SameError == nil:
		return s + "; the error before the replay is not known"
	case *f.SameError:
		return s + "; the same error as before"
	}
	return s + "; another error than before: " + OneLine(f.ReplayedError)
}

// CameBackShort is the mark in list's BACK column: "-" for a message that
// did not come back after a replay, else how many times it was replayed
// and whether it fails the same way: "1 same", "2 other", or the count
// alone when the error before the replay is not known.
func CameBackShort(f retrycore.Facts) string {
	if !f.CameBack {
		return "-"
	}
	n := strconv.FormatInt(max(f.ReplayCount, 1), 10)
	switch {
	case f.SameError == nil:
		return n
	case *f.SameError:
		return n + " same"
	}
	return n + " other"
}
