package ui

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/parkinglot/parkinglot/replay"
	"github.com/parkinglot/parkinglot/retrycore"
)

func newTestIndex(t testing.TB) *msgIndex {
	t.Helper()
	d, err := newMsgIndex()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.close)
	return d
}

// TestMsgIndexGivesBackWhatItWasGiven: a summary read back for a row is
// the one stored (its id byte for byte, even when it is not UTF-8, which
// JSON would not keep), and the filter scans the search text: id, error,
// origin, routing key and group, in any case.
func TestMsgIndexGivesBackWhatItWasGiven(t *testing.T) {
	d := newTestIndex(t)
	origin := &retrycore.Origin{Destination: retrycore.Destination{Exchange: "orders", RoutingKey: "order.created"}, Source: "x-death"}
	parked := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	in := []replay.Summary{
		{Index: 7, ID: "id-\xff-raw", Exchange: "dlx", RoutingKey: "rk", BodySize: 12, Origin: origin,
			Facts: retrycore.Facts{Attempts: 3, Error: "Timeout talking to Ledger", Deaths: []retrycore.Death{{Queue: "orders", Reason: "rejected", Count: 3, Time: parked}}},
			Group: "timeout talking to ledger", ParkedAt: parked},
		{Index: 8, ID: "plain", OriginErr: "no origin", Group: "", Facts: retrycore.Facts{Error: ""}},
	}
	if err := d.add(in); err != nil {
		t.Fatal(err)
	}
	for i, want := range in {
		clear(d.shown) // read from the file, not the cache
		got, err := d.summary(int32(i))
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("summary %d:\n got  %+v\n want %+v", i, got, want)
		}
	}
	if i, ok := d.find("id-\xff-raw"); !ok || i != 0 {
		t.Fatalf("find = %d, %v", i, ok)
	}
	for filter, want := range map[string]string{"ledger": "[0]", "ORDER.CREATED": "[0]", "plain": "[1]", "": "[0 1]", "nothing": "[]"} {
		got, err := d.view(filter, "", sortQueue, false)
		if err != nil || fmt.Sprint(got) != want {
			t.Errorf("filter %q: %v, %v; want %s", filter, got, err, want)
		}
	}
	if got, _ := d.view("", "timeout talking to ledger", sortQueue, false); fmt.Sprint(got) != "[0]" {
		t.Errorf("group filter: %v", got)
	}
}
