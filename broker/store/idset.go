package store

import (
	"bufio"
	"cmp"
	"errors"
	"fmt"
	"hash/maphash"
	"os"
	"slices"
	"sort"
)

// IDSet is a set of message ids to act on, kept compact so that choosing a
// million rows in the TUI costs about 16 bytes a message in memory: a hash
// of each id and where the id is kept, the ids themselves in a buffer that
// moves to a private temporary file (0600, removed from its directory at
// once) once it passes idSetMemory. A hash only finds candidates; the id read back decides, so
// two ids that share a hash are never confused.
//
// Build it with Add, then Seal; a sealed set does not change and is safe
// for concurrent use. Close releases the file.
type IDSet struct {
	seed    maphash.Seed
	sum     func(string) uint64 // nil: maphash with seed (a test forces collisions)
	entries []idEntry           // sorted by hash once sealed; a position is an index here
	mem     []byte              // the ids while they fit in memory
	file    *os.File            // the ids once they did not
	w       *bufio.Writer
	size    int64 // bytes of ids kept
	sealed  bool
	dups    int
}

type idEntry struct {
	hash uint64
	ref  uint64 // offset<<16 | length of the id
}

// idSetMemory is how many bytes of ids a set keeps in memory before it
// moves them to a file: a few thousand typed ids never touch the disk.
const idSetMemory = 1 << 20

// maxIDLen bounds one id (a message_id is a short string of at most 255
// bytes; the other ids are shorter).
const maxIDLen = 1<<16 - 1

// ErrIDSetSealed: Add after Seal.
var ErrIDSetSealed = errors.New("id set already sealed")

// ErrBadID is wrapped by Add's error for an id a set cannot hold: an empty
// one, or one longer than 65,535 bytes. Its text is only the reason, so a
// caller can put its own kind of error in front.
var ErrBadID = errors.New("bad id")

type badIDError string

func (e badIDError) Error() string        { return string(e) }
func (e badIDError) Is(target error) bool { return target == ErrBadID }

// NewIDSet starts an empty set.
func NewIDSet() *IDSet { return &IDSet{seed: maphash.MakeSeed()} }

// IDSetOf builds and seals a set of ids.
func IDSetOf(ids ...string) (*IDSet, error) {
	s := NewIDSet()
	for _, id := range ids {
		if err := s.Add(id); err != nil {
			s.Close()
			return nil, err
		}
	}
	if err := s.Seal(); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// Add puts an id in the set (a repeat is dropped by Seal).
func (s *IDSet) Add(id string) error {
	switch {
	case s.sealed:
		return ErrIDSetSealed
	case id == "":
		return badIDError("an empty id")
	case len(id) > maxIDLen:
		return badIDError(fmt.Sprintf("an id of %d bytes (at most %d)", len(id), maxIDLen))
	}
	if s.file == nil && len(s.mem)+len(id) > idSetMemory {
		if err := s.spill(); err != nil {
			return err
		}
	}
	if s.w != nil {
		if _, err := s.w.WriteString(id); err != nil {
			return fmt.Errorf("id set: %w", err)
		}
	} else {
		s.mem = append(s.mem, id...)
	}
	s.entries = append(s.entries, idEntry{hash: s.hash(id), ref: uint64(s.size)<<16 | uint64(len(id))})
	s.size += int64(len(id))
	return nil
}

// spill moves the ids kept so far to a private temporary file.
func (s *IDSet) spill() error {
	f, err := os.CreateTemp("", "parkinglot-ids-*")
	if err != nil {
		return fmt.Errorf("id set: %w", err)
	}
	// Gone from the directory at once: nothing is left behind if the
	// process dies, and the open file stays readable until Close.
	if err := os.Remove(f.Name()); err != nil {
		f.Close()
		return fmt.Errorf("id set: %w", err)
	}
	s.file, s.w = f, bufio.NewWriterSize(f, 256<<10)
	if _, err := s.w.Write(s.mem); err != nil {
		return fmt.Errorf("id set: %w", err)
	}
	s.mem = nil
	return nil
}

// Seal sorts the set and drops repeated ids; after it the set is read-only.
func (s *IDSet) Seal() error {
	if s.sealed {
		return nil
	}
	if s.w != nil {
		if err := s.w.Flush(); err != nil {
			return fmt.Errorf("id set: %w", err)
		}
		s.w = nil
	}
	// By hash, then in the order added: the first of repeated ids stays.
	slices.SortFunc(s.entries, func(a, b idEntry) int {
		return cmp.Or(cmp.Compare(a.hash, b.hash), cmp.Compare(a.ref, b.ref))
	})
	out := s.entries[:0]
	for i := 0; i < len(s.entries); {
		j := i + 1
		for j < len(s.entries) && s.entries[j].hash == s.entries[i].hash {
			j++
		}
		if j == i+1 {
			out = append(out, s.entries[i])
			i = j
			continue
		}
		seen := map[string]bool{} // ids sharing a hash: repeats, rarely a collision
		for _, e := range s.entries[i:j] {
			id, err := s.read(e)
			if err != nil {
				return err
			}
			if !seen[id] {
				seen[id] = true
				out = append(out, e)
			}
		}
		i = j
	}
	s.dups = len(s.entries) - len(out)
	s.entries = slices.Clip(out)
	s.sealed = true
	return nil
}

// Len is how many distinct ids the sealed set holds.
func (s *IDSet) Len() int { return len(s.entries) }

// Repeats is how many ids Seal dropped as repeats.
func (s *IDSet) Repeats() int { return s.dups }

// Contains reports whether the sealed set holds id.
func (s *IDSet) Contains(id string) (bool, error) {
	_, ok, err := s.Index(id)
	return ok, err
}

// Close releases the file; the set must not be used after it.
func (s *IDSet) Close() error {
	if s == nil || s.file == nil {
		return nil
	}
	// The file stays set: a late reader gets os.ErrClosed, not a race.
	if err := s.file.Close(); err != nil && !errors.Is(err, os.ErrClosed) {
		return fmt.Errorf("id set: %w", err)
	}
	return nil
}

func (s *IDSet) hash(id string) uint64 {
	if s.sum != nil {
		return s.sum(id)
	}
	return maphash.String(s.seed, id)
}

// Index is the position of id in the sealed set (0 to Len-1), for a
// caller that keeps a bit a requested id (a BitSet) rather than a map.
func (s *IDSet) Index(id string) (int, bool, error) {
	h := s.hash(id)
	i := sort.Search(len(s.entries), func(k int) bool { return s.entries[k].hash >= h })
	for ; i < len(s.entries) && s.entries[i].hash == h; i++ {
		if int(s.entries[i].ref&maxIDLen) != len(id) {
			continue
		}
		got, err := s.read(s.entries[i])
		if err != nil {
			return 0, false, err
		}
		if got == id {
			return i, true, nil
		}
	}
	return 0, false, nil
}

// At is the id at position i of the sealed set.
func (s *IDSet) At(i int) (string, error) { return s.read(s.entries[i]) }

func (s *IDSet) read(e idEntry) (string, error) {
	off, n := int64(e.ref>>16), int(e.ref&maxIDLen)
	if s.file == nil {
		return string(s.mem[off : off+int64(n)]), nil
	}
	buf := make([]byte, n)
	if _, err := s.file.ReadAt(buf, off); err != nil {
		return "", fmt.Errorf("id set: %w", err)
	}
	return string(buf), nil
}
