package store

import (
	"iter"
	"math/bits"
)

// BitSet is a set of small non-negative integers, a bit each: the TUI's
// selection of rows and the replay engine's positions in a chosen IDSet,
// so that choosing a million messages costs 125 KB. The zero value is
// empty.
type BitSet struct {
	words []uint64
	n     int
}

// Has reports whether i is in the set.
func (s *BitSet) Has(i int) bool {
	w := i / 64
	return i >= 0 && w < len(s.words) && s.words[w]&(1<<(uint(i)%64)) != 0
}

// Put adds i (on) or removes it (!on). i must not be negative.
func (s *BitSet) Put(i int, on bool) {
	w, b := i/64, uint64(1)<<(uint(i)%64)
	if w >= len(s.words) {
		if !on {
			return
		}
		s.words = append(s.words, make([]uint64, w+1-len(s.words))...)
	}
	switch {
	case on && s.words[w]&b == 0:
		s.words[w] |= b
		s.n++
	case !on && s.words[w]&b != 0:
		s.words[w] &^= b
		s.n--
	}
}

// Len is how many integers the set holds.
func (s *BitSet) Len() int { return s.n }

// Clear empties the set.
func (s *BitSet) Clear() { *s = BitSet{} }

// All yields the integers of the set in increasing order.
func (s *BitSet) All() iter.Seq[int] {
	return func(yield func(int) bool) {
		for w, word := range s.words {
			for word != 0 {
				b := bits.TrailingZeros64(word)
				if !yield(w*64 + b) {
					return
				}
				word &^= 1 << uint(b)
			}
		}
	}
}
