package ui

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/parkinglot/parkinglot/broker/store"
	"github.com/parkinglot/parkinglot/replay"
)

// msgIndex is one browse's messages as the list needs them, in memory that
// does not grow with what each message carries: a 16-byte entry a message
// (when it was parked; its error group and origin as numbers into tables
// of the distinct ones) plus one offset a message in each of two private
// files (broker.Records, 0600, removed on close):
//   - hay: the id and the text "/" searches (id, error, origin, routing
//     key, group; lower case), scanned sequentially on a keystroke;
//   - sums: the whole summary, read back for the rows on screen.
//
// So a million-message parking lot costs about 40 bytes a message here
// (README, "Memory"). It only grows while its browse streams; a reload
// builds a new one. Used by the UI goroutine alone.
type msgIndex struct {
	ents    []msgEntry
	groups  strTable // replay.Summary.Group
	origins strTable // originText
	// back holds the messages that came back after a replay
	// (Facts.CameBack), a bit each, for the group screen's count.
	back store.BitSet
	// The widest id and origin, so columns are no wider than needed.
	idWidth, originWidth int

	hay, sums *store.Records
	// shown caches the summaries of rows drawn lately (a frame draws the
	// same rows as the one before); reset when it grows past shownMax.
	shown map[int32]replay.Summary
}

// msgEntry is what sorting and grouping need of a message.
type msgEntry struct {
	parked        int64 // Summary.ParkedAt in Unix nanoseconds; 0 unknown
	group, origin uint32
}

// shownMax bounds the summaries cache: a few screens' worth.
const shownMax = 1024

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

// newMsgIndex creates the index and its two files.
func newMsgIndex() (*msgIndex, error) {
	hay, err := store.NewRecords("", "parkinglot-rows-*.hay", "message list")
	if err != nil {
		return nil, err
	}
	sums, err := store.NewRecords("", "parkinglot-rows-*.sum", "message list")
	if err != nil {
		_ = hay.Close()
		return nil, err
	}
	return &msgIndex{hay: hay, sums: sums, shown: map[int32]replay.Summary{}}, nil
}

// emptyIndex is an index of no messages and no files, for the screen
// before its first browse started (or when it could not).
func emptyIndex() *msgIndex { return &msgIndex{shown: map[int32]replay.Summary{}} }

func (d *msgIndex) len() int { return len(d.ents) }

// close removes the files.
func (d *msgIndex) close() {
	if d.hay != nil {
		_ = d.hay.Close()
		_ = d.sums.Close()
	}
}

// add stores a batch of summaries, in order.
func (d *msgIndex) add(batch []replay.Summary) error {
	if d.hay == nil {
		return errors.New("message list: no files")
	}
	for _, s := range batch {
		origin := originText(s)
		hay := strings.ToLower(s.ID + "\x00" + s.Facts.Error + "\x00" + origin + "\x00" + s.RoutingKey + "\x00" + s.Group)
		if _, err := d.hay.AppendWith(func(buf []byte) ([]byte, error) {
			return append(appendID(buf, s.ID), hay...), nil
		}); err != nil {
			return err
		}
		js, err := json.Marshal(s)
		if err != nil {
			return fmt.Errorf("message list: %w", err)
		}
		if _, err := d.sums.AppendWith(func(buf []byte) ([]byte, error) {
			buf = binary.AppendUvarint(buf, uint64(s.Index))
			return append(appendID(buf, s.ID), js...), nil
		}); err != nil {
			return err
		}
		e := msgEntry{group: d.groups.id(s.Group), origin: d.origins.id(origin)}
		if !s.ParkedAt.IsZero() {
			e.parked = s.ParkedAt.UnixNano()
		}
		if s.Facts.CameBack {
			d.back.Put(len(d.ents), true)
		}
		d.ents = append(d.ents, e)
		d.idWidth = max(d.idWidth, ansi.StringWidth(clean(s.ID)))
		d.originWidth = max(d.originWidth, ansi.StringWidth(origin))
	}
	return nil
}

// The id leads both records byte for byte (a message id need not be UTF-8,
// which JSON would not keep).
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

// summary reads message i's summary back.
func (d *msgIndex) summary(i int32) (replay.Summary, error) {
	if s, ok := d.shown[i]; ok {
		return s, nil
	}
	rec, err := d.sums.Get(int(i))
	if err != nil {
		return replay.Summary{}, err
	}
	index, k := binary.Uvarint(rec)
	if k <= 0 {
		return replay.Summary{}, errRowRecord
	}
	id, js, err := readID(rec[k:])
	if err != nil {
		return replay.Summary{}, err
	}
	var s replay.Summary
	if err := json.Unmarshal(js, &s); err != nil {
		return replay.Summary{}, fmt.Errorf("message list: %w", err)
	}
	s.Index, s.ID = int(index), id
	if len(d.shown) >= shownMax {
		clear(d.shown)
	}
	d.shown[i] = s
	return s, nil
}

// id is message i's id.
func (d *msgIndex) id(i int32) (string, error) {
	rec, err := d.hay.Get(int(i))
	if err != nil {
		return "", err
	}
	id, _, err := readID(rec)
	return id, err
}

// idSet is the ids of messages idx as a sealed set, compact however many
// they are (store.IDSet); repeated ids are kept once and counted in its
// Repeats. The caller closes it. A long list is read in one pass over the
// file rather than a read a message.
func (d *msgIndex) idSet(idx []int32) (*store.IDSet, error) {
	set := store.NewIDSet()
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
func (d *msgIndex) eachID(idx []int32, fn func(id string) error) error {
	if len(idx) <= 256 {
		for _, i := range idx {
			id, err := d.id(i)
			if err != nil {
				return err
			}
			if err := fn(id); err != nil {
				return err
			}
		}
		return nil
	}
	var want store.BitSet // a bit a message, not a map a chosen one
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

// find is the first message with this id.
func (d *msgIndex) find(id string) (int32, bool) {
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

// scan walks the hay records of the messages this index holds, from from.
func (d *msgIndex) scan(from int32, fn func(i int32, rec []byte) bool) error {
	if d.hay == nil {
		return nil
	}
	n := int32(len(d.ents))
	return d.hay.Scan(int(from), func(i int, rec []byte) bool {
		return int32(i) < n && fn(int32(i), rec)
	})
}

// match calls fn for each message from from on that is in group ("" any)
// and whose search text holds filter (lower case; "" any).
func (d *msgIndex) match(from int32, filter, group string, fn func(i int32)) error {
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
			if any || d.ents[i].group == gid {
				fn(i)
			}
		}
		return nil
	}
	needle := []byte(filter)
	var perr error
	err := d.scan(from, func(i int32, rec []byte) bool {
		if !any && d.ents[i].group != gid {
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

// parkedAt is message i's parked time (zero unknown).
func (d *msgIndex) parkedAt(i int32) time.Time {
	if p := d.ents[i].parked; p != 0 {
		return time.Unix(0, p)
	}
	return time.Time{}
}
