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
