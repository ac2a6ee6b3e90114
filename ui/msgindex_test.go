package ui

import (
	"fmt"
	"reflect"
	"runtime"
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
// JSON would not keep), ids and finds by id work from the files, and the
// filter scans the search text.
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
	ids, err := d.idSet([]int32{1, 0, 1})
	if err != nil || ids.Len() != 2 {
		t.Fatalf("idSet = %v, %v; want 2 ids", ids, err)
	}
	for _, id := range []string{"plain", "id-\xff-raw"} {
		if in, err := ids.Contains(id); !in || err != nil {
			t.Fatalf("idSet lacks %q (%v)", id, err)
		}
	}
	if i, ok := d.find("id-\xff-raw"); !ok || i != 0 {
		t.Fatalf("find = %d, %v", i, ok)
	}
	if _, ok := d.find("absent"); ok {
		t.Fatal("found an absent id")
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

// TestMsgIndexMemoryPerMessage: what the list keeps in memory for a
// message is under the budget of 100 bytes, whatever the message carries
// (here a long error, a stack trace and deaths, which go to the files).
func TestMsgIndexMemoryPerMessage(t *testing.T) {
	const n = 200_000
	d := newTestIndex(t)
	before := heapInUse()
	fillTestIndex(t, d, n)
	per := float64(heapInUse()-before) / n
	t.Logf("%.1f bytes a message in memory (%d groups, %d origins)", per, len(d.groups.names), len(d.origins.names))
	if per > 100 {
		t.Fatalf("the list keeps %.0f bytes a message; the budget is 100", per)
	}
	runtime.KeepAlive(d)
}

// Acting on every message of a big list holds its ids as a compact set
// (the ids themselves on disk), not a string a message.
func TestSelectingEveryMessageKeepsTheIDsCompact(t *testing.T) {
	const n = 200_000
	d := newTestIndex(t)
	fillTestIndex(t, d, n)
	idx := make([]int32, n)
	for i := range idx {
		idx[i] = int32(i)
	}
	before := heapInUse()
	ids, err := d.idSet(idx)
	if err != nil {
		t.Fatal(err)
	}
	defer ids.Close()
	per := float64(heapInUse()-before) / n
	t.Logf("%.1f bytes a chosen message in memory", per)
	if per > 24 {
		t.Fatalf("the chosen ids take %.0f bytes a message; want at most 24 (a 36-byte id as a string: 52)", per)
	}
	if ids.Len() != n {
		t.Fatalf("Len = %d, want %d", ids.Len(), n)
	}
	for _, i := range []int{0, n / 3, n - 1} {
		if in, err := ids.Contains(fmt.Sprintf("%036d", i)); !in || err != nil {
			t.Fatalf("message %d not in the set (%v)", i, err)
		}
	}
	runtime.KeepAlive(idx)
}

// fillTestIndex adds n messages with distinct ids and errors.
func fillTestIndex(t *testing.T, d *msgIndex, n int) {
	t.Helper()
	origin := &retrycore.Origin{Destination: retrycore.Destination{Exchange: "payments", RoutingKey: "payment.execute"}, Source: "x-original-exchange"}
	stack := fmt.Sprintf("%0500d", 0)
	batch := make([]replay.Summary, 0, 1000)
	for i := 0; i < n; i++ {
		e := fmt.Sprintf("transfer %d not found in ledger shard %d", i, i%7)
		batch = append(batch, replay.Summary{Index: i, ID: fmt.Sprintf("%036d", i), Exchange: "error.exchange", RoutingKey: "payment.error", Origin: origin,
			Facts: retrycore.Facts{Attempts: 4, Error: e, StackTrace: stack, Deaths: []retrycore.Death{{Queue: "payments", Reason: "rejected", Count: 4}}},
			Group: retrycore.GroupKey(e), ParkedAt: testNow.Add(-time.Duration(i) * time.Second)})
		if len(batch) == cap(batch) {
			if err := d.add(batch); err != nil {
				t.Fatal(err)
			}
			batch = batch[:0]
		}
	}
}

func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}
