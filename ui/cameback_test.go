package ui

import (
	"strings"
	"testing"
	"time"

	"github.com/parkinglot/parkinglot/replay"
	"github.com/parkinglot/parkinglot/retrycore"
)

// TestGroupsCountWhatCameBack: the group screen says how many messages of
// a group came back after a replay, before the error text.
func TestGroupsCountWhatCameBack(t *testing.T) {
	d := newTestIndex(t)
	back := retrycore.Facts{Error: "ledger down", CameBack: true, ReplayID: "r-1", ReplayCount: 1}
	in := []replay.Summary{
		{ID: "a", Group: "ledger down", Facts: back},
		{ID: "b", Group: "ledger down", Facts: retrycore.Facts{Error: "ledger down"}},
		{ID: "c", Group: "ledger down", Facts: back},
		{ID: "d", Group: "timeout", Facts: retrycore.Facts{Error: "timeout"}},
	}
	if err := d.add(in); err != nil {
		t.Fatal(err)
	}
	gs, err := d.groupsOf("")
	if err != nil {
		t.Fatal(err)
	}
	if len(gs) != 2 || gs[0].Key != "ledger down" || gs[0].CameBack != 2 || gs[1].CameBack != 0 {
		t.Fatalf("groups %+v: want ledger down with 2 came back, timeout with none", gs)
	}
	m := &messagesScreen{width: 100}
	m.c = &common{}
	row := m.groupRow(gs[0], columns{age: 6, origin: 12}, time.Now(), false)
	if !strings.Contains(row, "[2 came back] ledger down") {
		t.Errorf("group row %q: want [2 came back] before the error", row)
	}
	if row := m.groupRow(gs[1], columns{age: 6, origin: 12}, time.Now(), false); strings.Contains(row, "came back") {
		t.Errorf("group row %q: nothing came back", row)
	}
}

// TestMessageRowsMarkWhatCameBack: each row of the list says whether its
// message came back after a replay, as the CLI's list does (BACK:
// format.CameBackShort), at the sizes the goldens use.
func TestMessageRowsMarkWhatCameBack(t *testing.T) {
	for _, w := range []int{80, 120} {
		fb := newFakeBackend(t.TempDir())
		seedDemo(fb)
		same, other := true, false
		ms := fb.messages["demo.error.dlq"]
		ms[2].sum.Facts.CameBack, ms[2].sum.Facts.ReplayID, ms[2].sum.Facts.ReplayCount, ms[2].sum.Facts.SameError = true, "r-1", 2, &same
		ms[3].sum.Facts.CameBack, ms[3].sum.Facts.ReplayID, ms[3].sum.Facts.ReplayCount, ms[3].sum.Facts.SameError = true, "r-2", 1, &other
		hs := newHarness(t, fb, "demo.error.dlq", w, 24)
		hs.until("loaded", hs.loaded)
		rows := map[string]string{}
		for _, l := range strings.Split(hs.screen(), "\n") {
			if f := strings.Fields(strings.TrimLeft(l, " ▸●")); len(f) > 0 && strings.HasPrefix(f[0], "pay-") {
				rows[f[0]] = l
			}
		}
		if !strings.Contains(hs.screen(), " BACK ") {
			t.Fatalf("%d columns: no BACK column:\n%s", w, hs.screen())
		}
		for id, want := range map[string]string{"pay-0003": " 2 same ", "pay-0004": " 1 other ", "pay-0001": " - "} {
			if !strings.Contains(rows[id], want) {
				t.Errorf("%d columns: row %q lacks %q", w, rows[id], want)
			}
		}
	}
}
