package ui

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/parkinglot/parkinglot/broker/store"
	"github.com/parkinglot/parkinglot/replay"
)

// msgIndex is one browse's messages as the list needs them: store.Rows (a
// few numbers a message in memory, the rest in private files) given what
// the list shows and searches of a summary, its whole summary as JSON, and
// the widest id and origin, so columns are no wider than needed. Used by
// the UI goroutine alone.
type msgIndex struct {
	rows                 *store.Rows
	idWidth, originWidth int
	// shown caches the summaries of rows drawn lately (a frame draws the
	// same rows as the one before); reset when it grows past shownMax.
	shown map[int32]replay.Summary
}

// shownMax bounds the summaries cache: a few screens' worth.
const shownMax = 1024

// newMsgIndex creates the index and its files.
func newMsgIndex() (*msgIndex, error) {
	rows, err := store.NewRows()
	if err != nil {
		return nil, err
	}
	return &msgIndex{rows: rows, shown: map[int32]replay.Summary{}}, nil
}

// emptyIndex is an index of no messages and no files, for the screen
// before its first browse started (or when it could not).
func emptyIndex() *msgIndex {
	return &msgIndex{rows: &store.Rows{}, shown: map[int32]replay.Summary{}}
}

func (d *msgIndex) len() int { return d.rows.Len() }

// close removes the files.
func (d *msgIndex) close() { d.rows.Close() }

// add stores a batch of summaries, in order.
func (d *msgIndex) add(batch []replay.Summary) error {
	for _, s := range batch {
		origin := originText(s)
		js, err := json.Marshal(s)
		if err != nil {
			return fmt.Errorf("message list: %w", err)
		}
		if err := d.rows.Add(store.Row{
			ID: s.ID, Index: s.Index, Summary: js,
			Search: strings.ToLower(s.ID + "\x00" + s.Facts.Error + "\x00" + origin + "\x00" + s.RoutingKey + "\x00" + s.Group),
			Group:  s.Group, Origin: origin, Parked: s.ParkedAt, CameBack: s.Facts.CameBack,
		}); err != nil {
			return err
		}
		d.idWidth = max(d.idWidth, ansi.StringWidth(clean(s.ID)))
		d.originWidth = max(d.originWidth, ansi.StringWidth(origin))
	}
	return nil
}

// summary reads message i's summary back.
func (d *msgIndex) summary(i int32) (replay.Summary, error) {
	if s, ok := d.shown[i]; ok {
		return s, nil
	}
	index, id, js, err := d.rows.Summary(i)
	if err != nil {
		return replay.Summary{}, err
	}
	var s replay.Summary
	if err := json.Unmarshal(js, &s); err != nil {
		return replay.Summary{}, fmt.Errorf("message list: %w", err)
	}
	s.Index, s.ID = index, id
	if len(d.shown) >= shownMax {
		clear(d.shown)
	}
	d.shown[i] = s
	return s, nil
}

func (d *msgIndex) id(i int32) (string, error)              { return d.rows.ID(i) }
func (d *msgIndex) idSet(idx []int32) (*store.IDSet, error) { return d.rows.IDSet(idx) }
func (d *msgIndex) find(id string) (int32, bool)            { return d.rows.Find(id) }

// carrying counts the messages of the list whose id is in ids: what an
// action by those ids takes, copies that share an id included.
func (d *msgIndex) carrying(ids *store.IDSet) (int, error) {
	n := 0
	var cerr error
	err := d.rows.ScanIDs(0, func(_ int32, id string) bool {
		var in bool
		in, cerr = ids.Contains(id)
		if in {
			n++
		}
		return cerr == nil
	})
	return n, errors.Join(err, cerr)
}
func (d *msgIndex) match(from int32, filter, group string, fn func(i int32)) error {
	return d.rows.Match(from, filter, group, fn)
}

// sortMode orders the message list; `s` cycles through them, `S` reverses.
type sortMode int

const (
	sortQueue  sortMode = iota // as the queue holds them
	sortAge                    // oldest parked first
	sortError                  // by error text
	sortOrigin                 // by origin exchange and routing key
	sortModes
)

func (m sortMode) String() string {
	return [...]string{"queue order", "age", "error", "origin"}[m]
}

// view returns the messages that pass the filter (lower case here) and
// belong to group ("" any), in the sort order.
func (d *msgIndex) view(filter, group string, mode sortMode, reverse bool) ([]int32, error) {
	idx := make([]int32, 0, d.len())
	err := d.match(0, strings.ToLower(filter), group, func(i int32) { idx = append(idx, i) })
	d.sortIdx(idx, mode, reverse)
	return idx, err
}

// sortIdx sorts on the compact entries alone: ages are numbers, and
// errors and origins compare by their rank among the distinct ones. An
// error sorts by its group's text (retrycore.GroupKey: the error with its
// numbers and ids masked), so equal errors stay together, in queue order.
func (d *msgIndex) sortIdx(idx []int32, mode sortMode, reverse bool) {
	var cmp func(a, b int32) int
	switch mode {
	case sortAge:
		cmp = func(a, b int32) int {
			ta, tb := d.rows.Entry(a).Parked, d.rows.Entry(b).Parked
			if (ta == 0) != (tb == 0) {
				if ta == 0 {
					return 1 // unknown times last
				}
				return -1
			}
			return cmpInt(ta, tb)
		}
	case sortError:
		rank := d.rows.GroupRanks()
		cmp = func(a, b int32) int { return cmpInt(rank[d.rows.Entry(a).Group], rank[d.rows.Entry(b).Group]) }
	case sortOrigin:
		rank := d.rows.OriginRanks()
		cmp = func(a, b int32) int { return cmpInt(rank[d.rows.Entry(a).Origin], rank[d.rows.Entry(b).Origin]) }
	default:
		if reverse {
			slices.Reverse(idx)
		}
		return
	}
	if reverse {
		c := cmp
		cmp = func(a, b int32) int { return c(b, a) }
	}
	// Ties keep the queue order (idx arrives in it), reversed or not.
	slices.SortStableFunc(idx, cmp)
}

func cmpInt[T int64 | uint32](a, b T) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// msgGroup is one distinct (normalised) error with its messages.
type msgGroup struct {
	Key     string // Summary.Group
	Indices []int32
	// CameBack counts its messages that came back after a replay.
	CameBack int
	Newest   time.Time
	Origins  []string // distinct origins, at most three
	More     bool     // more origins than listed
}

// groupsOf folds the filtered messages into error groups, largest first.
func (d *msgIndex) groupsOf(filter string) ([]msgGroup, error) {
	slot := map[uint32]int{}
	var gs []msgGroup
	var newest []int64
	err := d.match(0, strings.ToLower(filter), "", func(i int32) {
		e := d.rows.Entry(i)
		n, ok := slot[e.Group]
		if !ok {
			n = len(gs)
			slot[e.Group] = n
			gs = append(gs, msgGroup{Key: d.rows.Group(e.Group)})
			newest = append(newest, 0)
		}
		g := &gs[n]
		g.Indices = append(g.Indices, i)
		if d.rows.CameBack(i) {
			g.CameBack++
		}
		newest[n] = max(newest[n], e.Parked)
		if o := d.rows.Origin(e.Origin); !contains(g.Origins, o) {
			if len(g.Origins) < 3 {
				g.Origins = append(g.Origins, o)
			} else {
				g.More = true
			}
		}
	})
	for n := range gs {
		if newest[n] != 0 {
			gs[n].Newest = time.Unix(0, newest[n])
		}
	}
	sort.SliceStable(gs, func(i, j int) bool {
		if len(gs[i].Indices) != len(gs[j].Indices) {
			return len(gs[i].Indices) > len(gs[j].Indices)
		}
		return gs[i].Key < gs[j].Key
	})
	return gs, err
}

func contains(xs []string, x string) bool {
	for _, s := range xs {
		if s == x {
			return true
		}
	}
	return false
}
