package store

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

func TestIDSetFindsEachIDAndDropsRepeats(t *testing.T) {
	s, err := IDSetOf("b", "a", "b", "c", "a")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Len() != 3 || s.Repeats() != 2 {
		t.Fatalf("Len = %d, Repeats = %d; want 3, 2", s.Len(), s.Repeats())
	}
	for _, id := range []string{"a", "b", "c"} {
		if ok, err := s.Contains(id); !ok || err != nil {
			t.Errorf("Contains(%q) = %v, %v", id, ok, err)
		}
	}
	if ok, _ := s.Contains("d"); ok {
		t.Error("Contains(d) = true")
	}
	var got []string
	for i := range s.Len() {
		id, err := s.At(i)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, id)
	}
	slices.Sort(got)
	if !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Fatalf("ids = %v", got)
	}
}

// Ids that share a hash are told apart by the id read back, never confused.
func TestIDSetHashCollisionsDoNotConfuseIDs(t *testing.T) {
	s := NewIDSet()
	s.sum = func(string) uint64 { return 7 } // every id collides
	for _, id := range []string{"x1", "x2", "x1", "x3"} {
		if err := s.Add(id); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Seal(); err != nil {
		t.Fatal(err)
	}
	if s.Len() != 3 {
		t.Fatalf("Len = %d, want 3", s.Len())
	}
	seen := map[int]string{}
	for _, id := range []string{"x1", "x2", "x3"} {
		i, ok, err := s.Index(id)
		if !ok || err != nil {
			t.Fatalf("Index(%q) = %d, %v, %v", id, i, ok, err)
		}
		if got, _ := s.At(i); got != id || seen[i] != "" {
			t.Fatalf("Index(%q) = %d, which holds %q (seen %q)", id, i, got, seen[i])
		}
		seen[i] = id
	}
	if ok, _ := s.Contains("x4"); ok {
		t.Fatal("Contains(x4) = true: a shared hash matched another id")
	}
}

// Past idSetMemory the ids move to a private file; the set keeps ~16 bytes
// an id in memory and still finds every one.
func TestIDSetSpillsToAFile(t *testing.T) {
	const n = 60000 // 60000 × 26 bytes: past the 1 MiB kept in memory
	s := NewIDSet()
	defer s.Close()
	for i := range n {
		if err := s.Add(fmt.Sprintf("0b7f3c1e-%08d-4e2a-9f00", i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Seal(); err != nil {
		t.Fatal(err)
	}
	if s.file == nil || s.mem != nil {
		t.Fatal("the ids stayed in memory")
	}
	if s.Len() != n {
		t.Fatalf("Len = %d, want %d", s.Len(), n)
	}
	for _, i := range []int{0, 1, n / 2, n - 1} {
		if ok, err := s.Contains(fmt.Sprintf("0b7f3c1e-%08d-4e2a-9f00", i)); !ok || err != nil {
			t.Fatalf("id %d: Contains = %v, %v", i, ok, err)
		}
	}
	if got := cap(s.entries) * 16 / n; got > 16 {
		t.Fatalf("%d bytes an id in memory, want 16", got)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Contains("0b7f3c1e-00000000-4e2a-9f00"); err == nil {
		t.Fatal("a read after Close did not fail")
	}
}

func TestIDSetRefusesBadIDs(t *testing.T) {
	if _, err := IDSetOf("a", ""); !errors.Is(err, ErrBadID) || err.Error() != "an empty id" {
		t.Fatalf("empty id: %v, want ErrBadID", err)
	}
	if err := NewIDSet().Add(strings.Repeat("x", maxIDLen+1)); !errors.Is(err, ErrBadID) {
		t.Fatalf("long id: %v, want ErrBadID", err)
	}
	s, _ := IDSetOf("a")
	if err := s.Add("b"); !errors.Is(err, ErrIDSetSealed) {
		t.Fatalf("Add after Seal: %v", err)
	}
}
