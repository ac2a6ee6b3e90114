package store

import (
	"bytes"
	"encoding/binary"
	"errors"
	"slices"
	"strings"
	"time"
)

// Rows is one browse's messages as a list needs them, in memory that does
// not grow with what each message carries: a 16-byte Entry a message (when
// it was parked; its group and origin as numbers into tables of the
// distinct ones) and a bit for the messages that came back, plus one
// offset a message in each of two private files (Records):
//   - hay: the id and the text a filter searches, scanned sequentially on
//     a keystroke;
//   - sums: the whole summary, read back for the rows on screen.
//
// So a million-message parking lot costs about 40 bytes a message here.
// It only grows while its browse streams; a reload builds a new one. The
// zero value holds nothing and has no files. Used by one goroutine (the
// TUI's).
type Rows struct {
	ents    []Entry
	groups  strTable
	origins strTable
	// back holds the messages that came back after a replay, a bit each.
	back BitSet

	hay, sums *Records
}

// Row is what Rows is given of a message.
type Row struct {
	ID     string // kept byte for byte: an id need not be UTF-8
	Index  int    // its position in the browse spool
	Search string // the text a filter looks in (lower case)
	// Group and Origin are what the list sorts and groups by; they repeat
	// across a parking lot, so a message holds a number for each.
	Group, Origin string
	Parked        time.Time // zero unknown
	CameBack      bool      // it came back after a replay
	Summary       []byte    // the rest, read back by Summary
}

// Entry is what sorting and grouping need of a message.
type Entry struct {
	Parked        int64  // Unix nanoseconds; 0 unknown
	Group, Origin uint32 // numbers into the distinct groups and origins
}

// strTable numbers distinct strings: the error groups and the origins of
// a parking lot repeat, so a message holds a number, not a copy.
type strTable struct {
	names []string
	ids   map[string]uint32
}

func (t *strTable) id(s string) uint32 {
	if n, ok := t.ids[s]; ok {
		return n
	}
	if t.ids == nil {
		t.ids = map[string]uint32{}
	}
	n := uint32(len(t.names))
	t.names = append(t.names, s)
	t.ids[s] = n
	return n
}

// ranks gives each number its place in the names' sorted order, so a sort
// by name compares two integers.
func (t *strTable) ranks() []uint32 {
	order := make([]uint32, len(t.names))
	for i := range order {
		order[i] = uint32(i)
	}
	slices.SortStableFunc(order, func(a, b uint32) int { return strings.Compare(t.names[a], t.names[b]) })
	rank := make([]uint32, len(t.names))
	for r, n := range order {
		rank[n] = uint32(r)
	}
	return rank
}

// NewRows creates the rows and their two files.
func NewRows() (*Rows, error) {
	hay, err := NewRecords("", "parkinglot-rows-*.hay", "message list")
	if err != nil {
		return nil, err
	}
	sums, err := NewRecords("", "parkinglot-rows-*.sum", "message list")
	if err != nil {
		_ = hay.Close()
		return nil, err
	}
	return &Rows{hay: hay, sums: sums}, nil
}

// Len is the number of messages held.
func (d *Rows) Len() int { return len(d.ents) }

// Close removes the files.
func (d *Rows) Close() {
	if d.hay != nil {
		_ = d.hay.Close()
		_ = d.sums.Close()
	}
}

// Add stores one message after those held.
func (d *Rows) Add(r Row) error {
	if d.hay == nil {
		return errors.New("message list: no files")
	}
	if _, err := d.hay.AppendWith(func(buf []byte) ([]byte, error) {
		return append(appendID(buf, r.ID), r.Search...), nil
	}); err != nil {
		return err
	}
	if _, err := d.sums.AppendWith(func(buf []byte) ([]byte, error) {
		buf = binary.AppendUvarint(buf, uint64(r.Index))
		return append(appendID(buf, r.ID), r.Summary...), nil
	}); err != nil {
		return err
	}
	e := Entry{Group: d.groups.id(r.Group), Origin: d.origins.id(r.Origin)}
	if !r.Parked.IsZero() {
		e.Parked = r.Parked.UnixNano()
	}
	if r.CameBack {
		d.back.Put(len(d.ents), true)
	}
	d.ents = append(d.ents, e)
	return nil
}

// The id leads both records byte for byte (a message id need not be UTF-8,
// which a JSON summary would not keep).
func appendID(buf []byte, id string) []byte {
	buf = binary.AppendUvarint(buf, uint64(len(id)))
	return append(buf, id...)
}

var errRowRecord = errors.New("message list: corrupt record")

func readID(rec []byte) (id string, rest []byte, err error) {
	n, k := binary.Uvarint(rec)
	if k <= 0 || uint64(len(rec)-k) < n {
		return "", nil, errRowRecord
	}
	return string(rec[k : k+int(n)]), rec[k+int(n):], nil
}

// Summary reads message i's Row.Index, Row.ID and Row.Summary back.
func (d *Rows) Summary(i int32) (index int, id string, summary []byte, err error) {
	rec, err := d.sums.Get(int(i))
	if err != nil {
		return 0, "", nil, err
	}
	n, k := binary.Uvarint(rec)
	if k <= 0 {
		return 0, "", nil, errRowRecord
	}
	id, summary, err = readID(rec[k:])
	if err != nil {
		return 0, "", nil, err
	}
	return int(n), id, summary, nil
}

// ID is message i's id.
func (d *Rows) ID(i int32) (string, error) {
	rec, err := d.hay.Get(int(i))
	if err != nil {
		return "", err
	}
	id, _, err := readID(rec)
	return id, err
}

// IDSet is the ids of messages idx as a sealed set, compact however many
// they are; repeated ids are kept once and counted in its Repeats. The
// caller closes it. A long list is read in one pass over the file rather
// than a read a message.
func (d *Rows) IDSet(idx []int32) (*IDSet, error) {
	set := NewIDSet()
	err := d.eachID(idx, set.Add)
	if err == nil {
		err = set.Seal()
	}
	if err != nil {
		set.Close()
		return nil, err
	}
	return set, nil
}

// eachID hands fn the id of each message of idx, in no particular order.
func (d *Rows) eachID(idx []int32, fn func(id string) error) error {
	if len(idx) <= 256 {
		for _, i := range idx {
			id, err := d.ID(i)
			if err != nil {
				return err
			}
			if err := fn(id); err != nil {
				return err
			}
		}
		return nil
	}
	var want BitSet // a bit a message, not a map a chosen one
	for _, i := range idx {
		want.Put(int(i), true)
	}
	var ferr error
	err := d.scan(0, func(i int32, rec []byte) bool {
		if !want.Has(int(i)) {
			return true
		}
		id, _, err := readID(rec)
		if err == nil {
			err = fn(id)
		}
		ferr = err
		return err == nil
	})
	return errors.Join(err, ferr)
}

// Find is the first message with this id.
func (d *Rows) Find(id string) (int32, bool) {
	found := int32(-1)
	_ = d.scan(0, func(i int32, rec []byte) bool {
		if got, _, err := readID(rec); err == nil && got == id {
			found = i
			return false
		}
		return true
	})
	return found, found >= 0
}

// ScanIDs hands fn the id of each message from from on, in order, until fn
// returns false: one sequential read of the file.
func (d *Rows) ScanIDs(from int32, fn func(i int32, id string) bool) error {
	var perr error
	err := d.scan(from, func(i int32, rec []byte) bool {
		id, _, err := readID(rec)
		if err != nil {
			perr = err
			return false
		}
		return fn(i, id)
	})
	return errors.Join(err, perr)
}

// scan walks the hay records of the messages held, from from.
func (d *Rows) scan(from int32, fn func(i int32, rec []byte) bool) error {
	if d.hay == nil {
		return nil
	}
	n := int32(len(d.ents))
	return d.hay.Scan(int(from), func(i int, rec []byte) bool {
		return int32(i) < n && fn(int32(i), rec)
	})
}

// Match calls fn for each message from from on that is in group ("" any)
// and whose search text holds filter (lower case; "" any).
func (d *Rows) Match(from int32, filter, group string, fn func(i int32)) error {
	gid, any := uint32(0), group == ""
	if !any {
		n, ok := d.groups.ids[group]
		if !ok {
			return nil // no such group: nothing matches
		}
		gid = n
	}
	if filter == "" {
		for i := from; i < int32(len(d.ents)); i++ {
			if any || d.ents[i].Group == gid {
				fn(i)
			}
		}
		return nil
	}
	needle := []byte(filter)
	var perr error
	err := d.scan(from, func(i int32, rec []byte) bool {
		if !any && d.ents[i].Group != gid {
			return true
		}
		_, hay, err := readID(rec)
		if err != nil {
			perr = err
			return false
		}
		if bytes.Contains(hay, needle) {
			fn(i)
		}
		return true
	})
	return errors.Join(err, perr)
}

// Entry is what message i keeps in memory.
func (d *Rows) Entry(i int32) Entry { return d.ents[i] }

// CameBack reports whether message i came back after a replay.
func (d *Rows) CameBack(i int32) bool { return d.back.Has(int(i)) }

// Group is the text of group number n (Entry.Group).
func (d *Rows) Group(n uint32) string { return d.groups.names[n] }

// Origin is the text of origin number n (Entry.Origin).
func (d *Rows) Origin(n uint32) string { return d.origins.names[n] }

// GroupRanks gives each group number its place in the groups' sorted
// order, so a sort by group compares two integers.
func (d *Rows) GroupRanks() []uint32 { return d.groups.ranks() }

// OriginRanks is GroupRanks for the origins.
func (d *Rows) OriginRanks() []uint32 { return d.origins.ranks() }
