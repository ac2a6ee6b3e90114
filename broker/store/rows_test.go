package store

import (
	"fmt"
	"runtime"
	"slices"
	"testing"
	"time"
)

func newTestRows(t testing.TB) *Rows {
	t.Helper()
	d, err := NewRows()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Close)
	return d
}

// TestRowsGiveBackWhatTheyWereGiven: a summary read back is the one stored
// (its id byte for byte, even when it is not UTF-8), ids and finds by id
// work from the files, and the filter scans the search text.
func TestRowsGiveBackWhatTheyWereGiven(t *testing.T) {
	d := newTestRows(t)
	parked := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	in := []Row{
		{ID: "id-\xff-raw", Index: 7, Search: "id-\xff-raw\x00timeout talking to ledger\x00orders / order.created", Group: "timeout talking to ledger",
			Origin: "orders / order.created", Parked: parked, CameBack: true, Summary: []byte(`{"a":1}`)},
		{ID: "plain", Index: 8, Search: "plain", Summary: []byte{}},
	}
	for _, r := range in {
		if err := d.Add(r); err != nil {
			t.Fatal(err)
		}
	}
	if d.Len() != 2 {
		t.Fatalf("Len = %d", d.Len())
	}
	for i, want := range in {
		index, id, sum, err := d.Summary(int32(i))
		if err != nil || index != want.Index || id != want.ID || string(sum) != string(want.Summary) {
			t.Errorf("Summary(%d) = %d, %q, %q, %v; want %d, %q, %q", i, index, id, sum, err, want.Index, want.ID, want.Summary)
		}
		if id, err := d.ID(int32(i)); err != nil || id != want.ID {
			t.Errorf("ID(%d) = %q, %v", i, id, err)
		}
	}
	if e := d.Entry(0); e.Parked != parked.UnixNano() || d.Group(e.Group) != in[0].Group || d.Origin(e.Origin) != in[0].Origin {
		t.Errorf("entry 0 = %+v", e)
	}
	if d.Entry(1).Parked != 0 || !d.CameBack(0) || d.CameBack(1) {
		t.Error("unknown parked time or came-back bits wrong")
	}
	ids, err := d.IDSet([]int32{1, 0, 1})
	if err != nil || ids.Len() != 2 {
		t.Fatalf("IDSet = %v, %v; want 2 ids", ids, err)
	}
	for _, id := range []string{"plain", "id-\xff-raw"} {
		if in, err := ids.Contains(id); !in || err != nil {
			t.Fatalf("IDSet lacks %q (%v)", id, err)
		}
	}
	if i, ok := d.Find("id-\xff-raw"); !ok || i != 0 {
		t.Fatalf("Find = %d, %v", i, ok)
	}
	if _, ok := d.Find("absent"); ok {
		t.Fatal("found an absent id")
	}
	var scanned []string
	if err := d.ScanIDs(0, func(_ int32, id string) bool { scanned = append(scanned, id); return true }); err != nil || !slices.Equal(scanned, []string{"id-\xff-raw", "plain"}) {
		t.Fatalf("ScanIDs = %q, %v", scanned, err)
	}
	for _, c := range []struct{ filter, group, want string }{
		{"ledger", "", "[0]"}, {"order.created", "", "[0]"}, {"plain", "", "[1]"}, {"", "", "[0 1]"}, {"nothing", "", "[]"},
		{"", "timeout talking to ledger", "[0]"}, {"plain", "timeout talking to ledger", "[]"}, {"", "no such group", "[]"},
	} {
		got := []int32{}
		err := d.Match(0, c.filter, c.group, func(i int32) { got = append(got, i) })
		if err != nil || fmt.Sprint(got) != c.want {
			t.Errorf("Match(%q, %q) = %v, %v; want %s", c.filter, c.group, got, err, c.want)
		}
	}
	var empty Rows // no files: nothing held, nothing stored
	if empty.Len() != 0 || empty.Add(Row{ID: "x"}) == nil {
		t.Fatal("the zero Rows took a message")
	}
	if err := empty.Match(0, "x", "", func(int32) { t.Fatal("matched") }); err != nil {
		t.Fatal(err)
	}
}

// TestRowsMemoryPerMessage: what the list keeps in memory for a message
// is under the budget of 100 bytes, whatever the message carries (here a
// long search text and summary, which go to the files).
func TestRowsMemoryPerMessage(t *testing.T) {
	const n = 200_000
	d := newTestRows(t)
	before := heapInUse()
	fillTestRows(t, d, n)
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
	d := newTestRows(t)
	fillTestRows(t, d, n)
	idx := make([]int32, n)
	for i := range idx {
		idx[i] = int32(i)
	}
	before := heapInUse()
	ids, err := d.IDSet(idx)
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

// fillTestRows adds n messages with distinct ids and errors, and a
// summary the size of one with a stack trace and deaths.
func fillTestRows(t *testing.T, d *Rows, n int) {
	t.Helper()
	now := time.Date(2025, 3, 14, 9, 26, 53, 0, time.UTC)
	summary := []byte(fmt.Sprintf(`{"StackTrace":"%0500d"}`, 0))
	for i := 0; i < n; i++ {
		id := fmt.Sprintf("%036d", i)
		e := fmt.Sprintf("transfer %d not found in ledger shard %d", i, i%7)
		err := d.Add(Row{ID: id, Index: i, Search: id + "\x00" + e + "\x00payments / payment.execute\x00payment.error",
			Group: fmt.Sprintf("transfer <n> not found in ledger shard %d", i%7), Origin: "payments / payment.execute",
			Parked: now.Add(-time.Duration(i) * time.Second), Summary: summary})
		if err != nil {
			t.Fatal(err)
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
