package ui

import (
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
)

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
	idx := make([]int32, 0, len(d.ents))
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
			ta, tb := d.ents[a].parked, d.ents[b].parked
			if (ta == 0) != (tb == 0) {
				if ta == 0 {
					return 1 // unknown times last
				}
				return -1
			}
			return cmpInt(ta, tb)
		}
	case sortError:
		rank := d.groups.ranks()
		cmp = func(a, b int32) int { return cmpInt(rank[d.ents[a].group], rank[d.ents[b].group]) }
	case sortOrigin:
		rank := d.origins.ranks()
		cmp = func(a, b int32) int { return cmpInt(rank[d.ents[a].origin], rank[d.ents[b].origin]) }
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
		e := d.ents[i]
		n, ok := slot[e.group]
		if !ok {
			n = len(gs)
			slot[e.group] = n
			gs = append(gs, msgGroup{Key: d.groups.names[e.group]})
			newest = append(newest, 0)
		}
		g := &gs[n]
		g.Indices = append(g.Indices, i)
		if d.back.Has(int(i)) {
			g.CameBack++
		}
		newest[n] = max(newest[n], e.parked)
		if o := d.origins.names[e.origin]; !contains(g.Origins, o) {
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

// vlist is the virtualised list: only a cursor, an offset and a height, so
// a key press costs the same with 100 rows as with 100,000 and View draws
// only the visible window.
type vlist struct {
	cursor, offset, height, count int
}

func (l *vlist) setCount(n int) {
	l.count = n
	l.clamp()
}

func (l *vlist) setHeight(h int) {
	l.height = max(h, 1)
	l.clamp()
}

func (l *vlist) move(delta int) {
	l.cursor += delta
	l.clamp()
}

// navigate moves the cursor for the keymap's movement keys (up, down,
// page, top, bottom) and reports whether msg was one.
func (l *vlist) navigate(k *KeyMap, msg tea.KeyMsg) bool {
	switch {
	case key.Matches(msg, k.Up):
		l.move(-1)
	case key.Matches(msg, k.Down):
		l.move(1)
	case key.Matches(msg, k.PageUp):
		l.page(-1)
	case key.Matches(msg, k.PageDown):
		l.page(1)
	case key.Matches(msg, k.Top):
		l.top()
	case key.Matches(msg, k.Bottom):
		l.bottom()
	default:
		return false
	}
	return true
}

func (l *vlist) top()    { l.cursor = 0; l.clamp() }
func (l *vlist) bottom() { l.cursor = l.count - 1; l.clamp() }
func (l *vlist) page(n int) {
	l.move(n * max(l.height-1, 1))
}

func (l *vlist) clamp() {
	if l.cursor >= l.count {
		l.cursor = l.count - 1
	}
	if l.cursor < 0 {
		l.cursor = 0
	}
	if l.cursor < l.offset {
		l.offset = l.cursor
	}
	if l.cursor >= l.offset+l.height {
		l.offset = l.cursor - l.height + 1
	}
	if maxOff := l.count - l.height; l.offset > maxOff {
		l.offset = max(maxOff, 0)
	}
	if l.offset < 0 {
		l.offset = 0
	}
}

// window is the half-open range of rows on screen.
func (l vlist) window() (from, to int) {
	return l.offset, min(l.offset+l.height, l.count)
}
