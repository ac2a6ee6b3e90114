package store

import (
	"slices"
	"testing"
)

func TestBitSetPutHasLenAll(t *testing.T) {
	var s BitSet
	for _, i := range []int{130, 0, 63, 64, 130} {
		s.Put(i, true)
	}
	s.Put(1000, false) // removing what is not there does not grow the set
	if len(s.words) != 3 {
		t.Fatalf("words = %d, want 3", len(s.words))
	}
	if got := slices.Collect(s.All()); !slices.Equal(got, []int{0, 63, 64, 130}) || s.Len() != 4 {
		t.Fatalf("All = %v, Len = %d; want [0 63 64 130], 4", got, s.Len())
	}
	s.Put(63, false)
	if s.Has(63) || !s.Has(64) || s.Has(-1) || s.Has(5000) || s.Len() != 3 {
		t.Fatalf("after removing 63: Has(63)=%v Has(64)=%v Len=%d", s.Has(63), s.Has(64), s.Len())
	}
	s.Clear()
	if s.Len() != 0 || s.Has(0) {
		t.Fatal("Clear left something")
	}
}
