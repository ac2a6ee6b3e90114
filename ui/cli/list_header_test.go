package cli

import (
	"strings"
	"testing"
	"time"

	"github.com/parkinglot/parkinglot/replay"
)

// TestListSaysAttempts: list's column is ATTEMPTS, the manual's word (the
// TUI's list uses the same header), and the count sits under it; BACK
// marks a message that came back after a replay.
func TestListSaysAttempts(t *testing.T) {
	var b strings.Builder
	now := time.Now()
	tab := &SummaryTable{W: &b, Now: now}
	sum := replay.Summary{ID: "pay-1"}
	sum.Facts.Attempts = 12345678
	back := replay.Summary{ID: "pay-2"}
	same := true
	back.Facts.CameBack, back.Facts.ReplayID, back.Facts.ReplayCount, back.Facts.SameError = true, "r-1", 2, &same
	if err := tab.Write([]replay.Summary{sum, back}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(b.String(), "\n")
	head := strings.Fields(lines[0])
	if strings.Join(head, " ") != "ID AGE ATTEMPTS BACK ORIGIN ERROR" {
		t.Fatalf("header %q, want ID AGE ATTEMPTS BACK ORIGIN ERROR", lines[0])
	}
	at := strings.Index(lines[0], "ATTEMPTS") + len("ATTEMPTS")
	if got := lines[1][:at]; !strings.HasSuffix(got, " 12345678") {
		t.Errorf("row %q: want the attempts right-aligned under ATTEMPTS", lines[1])
	}
	backAt := strings.Index(lines[0], "BACK")
	if got := lines[1][backAt:]; !strings.HasPrefix(got, "- ") {
		t.Errorf("row %q: want - under BACK for a message never replayed", lines[1])
	}
	if got := lines[2][backAt:]; !strings.HasPrefix(got, "2 same ") {
		t.Errorf("row %q: want 2 same under BACK for a message that came back twice failing the same way", lines[2])
	}
}
