package store_test

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/parkinglot/parkinglot/broker/store"
)

// TestRecordsGiveBackWhatWasAppended: records of every size, pending or
// written, come back byte for byte by number and by a scan from any
// start; the file is private (0600) and gone after Close, and a closed
// Records says so.
func TestRecordsGiveBackWhatWasAppended(t *testing.T) {
	dir := t.TempDir()
	r, err := store.NewRecords(dir, "rows-*", "test rows")
	if err != nil {
		t.Fatal(err)
	}
	var want [][]byte
	add := func(rec []byte) {
		t.Helper()
		i, err := r.Append(rec)
		if err != nil || i != len(want) {
			t.Fatalf("Append = %d, %v; want %d", i, err, len(want))
		}
		want = append(want, rec)
	}
	check := func(when string) {
		t.Helper()
		for i, w := range want {
			got, err := r.Get(i)
			if err != nil || !bytes.Equal(got, w) {
				t.Fatalf("%s: Get(%d) = %d bytes, %v; want %d bytes", when, i, len(got), err, len(w))
			}
		}
		for _, from := range []int{0, 1, len(want) / 2, len(want) - 1} {
			next := from
			err := r.Scan(from, func(i int, rec []byte) bool {
				if i != next || !bytes.Equal(rec, want[i]) {
					t.Fatalf("%s: Scan(%d) gave record %d (%d bytes), want %d", when, from, i, len(rec), next)
				}
				next++
				return true
			})
			if err != nil || next != len(want) {
				t.Fatalf("%s: Scan(%d) ended at %d of %d: %v", when, from, next, len(want), err)
			}
		}
	}
	add([]byte{}) // an empty record is a record
	for i := 0; i < 100; i++ {
		add([]byte(fmt.Sprintf("record %d", i)))
	}
	check("pending")
	add(bytes.Repeat([]byte("x"), 3<<20)) // bigger than a scan's chunk
	for i := 0; i < 50_000; i++ {
		add([]byte(fmt.Sprintf("row %d of many", i)))
	}
	check("written")
	stop := 0
	if err := r.Scan(0, func(i int, _ []byte) bool { stop = i; return i < 10 }); err != nil || stop != 10 {
		t.Fatalf("Scan did not stop when told: at %d, %v", stop, err)
	}
	if _, err := r.Get(len(want)); err == nil {
		t.Fatal("Get past the end: no error")
	}

	// Its name is gone while it is in use (a killed program leaves no
	// copy of the messages); where the system cannot, Close removes it.
	files, _ := filepath.Glob(filepath.Join(dir, "rows-*"))
	if runtime.GOOS != "windows" && len(files) != 0 {
		t.Fatalf("files %v while the records are open, want none", files)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if files, _ := filepath.Glob(filepath.Join(dir, "rows-*")); len(files) != 0 {
		t.Fatalf("files %v after Close, want none", files)
	}
	if _, err := r.Append([]byte("late")); !errors.Is(err, store.ErrClosed) {
		t.Fatalf("Append after Close: %v, want ErrClosed", err)
	}
	if _, err := r.Get(0); !errors.Is(err, store.ErrClosed) {
		t.Fatalf("Get after Close: %v, want ErrClosed", err)
	}
}
