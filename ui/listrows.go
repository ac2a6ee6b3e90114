package ui

import (
	"sort"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/parkinglot/parkinglot/replay"
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

// msgData is one browse's summaries and the text the filter searches. It
// only grows while the browse streams; a reload replaces it.
type msgData struct {
	all []replay.Summary
	hay []string // lower case: id, error, origin, routing key, group
	// The widest id and origin, so columns are no wider than needed.
	idWidth, originWidth int
}

func (d *msgData) add(batch []replay.Summary) {
	for _, s := range batch {
		origin := originText(s)
		d.all = append(d.all, s)
		d.hay = append(d.hay, strings.ToLower(s.ID+"\x00"+s.Facts.Error+"\x00"+origin+"\x00"+s.RoutingKey+"\x00"+s.Group))
		d.idWidth = max(d.idWidth, ansi.StringWidth(clean(s.ID)))
		d.originWidth = max(d.originWidth, ansi.StringWidth(origin))
	}
}

// matches reports whether summary i passes the filter (lower case) and
// belongs to group ("" any).
func (d *msgData) matches(i int, filter, group string) bool {
	if group != "" && d.all[i].Group != group {
		return false
	}
	return filter == "" || strings.Contains(d.hay[i], filter)
}

// view returns the indices of the summaries that pass, in the sort order.
func (d *msgData) view(filter, group string, mode sortMode, reverse bool) []int {
	filter = strings.ToLower(filter)
	idx := make([]int, 0, len(d.all))
	for i := range d.all {
		if d.matches(i, filter, group) {
			idx = append(idx, i)
		}
	}
	d.sortIdx(idx, mode, reverse)
	return idx
}

func (d *msgData) sortIdx(idx []int, mode sortMode, reverse bool) {
	var less func(a, b int) bool
	switch mode {
	case sortAge:
		less = func(a, b int) bool {
			ta, tb := d.all[a].ParkedAt, d.all[b].ParkedAt
			if ta.IsZero() != tb.IsZero() {
				return tb.IsZero() // unknown times last
			}
			return ta.Before(tb)
		}
	case sortError:
		less = func(a, b int) bool { return d.all[a].Facts.Error < d.all[b].Facts.Error }
	case sortOrigin:
		less = func(a, b int) bool { return originText(d.all[a]) < originText(d.all[b]) }
	default:
		less = func(a, b int) bool { return a < b }
	}
	if reverse {
		l := less
		less = func(a, b int) bool { return l(b, a) }
	}
	sort.SliceStable(idx, func(i, j int) bool { return less(idx[i], idx[j]) })
}

// msgGroup is one distinct (normalised) error with its messages.
type msgGroup struct {
	Key     string // Summary.Group
	Sample  string // one real error text of the group
	Indices []int
	Newest  time.Time
	Origins []string // distinct origins, at most three
	More    bool     // more origins than listed
}

// groups folds the filtered messages into error groups, largest first.
func (d *msgData) groups(filter string) []msgGroup {
	filter = strings.ToLower(filter)
	byKey := map[string]int{}
	var gs []msgGroup
	for i := range d.all {
		if !d.matches(i, filter, "") {
			continue
		}
		s := d.all[i]
		n, ok := byKey[s.Group]
		if !ok {
			n = len(gs)
			byKey[s.Group] = n
			gs = append(gs, msgGroup{Key: s.Group, Sample: s.Facts.Error})
		}
		g := &gs[n]
		g.Indices = append(g.Indices, i)
		if s.ParkedAt.After(g.Newest) {
			g.Newest = s.ParkedAt
		}
		if o := originText(s); !contains(g.Origins, o) {
			if len(g.Origins) < 3 {
				g.Origins = append(g.Origins, o)
			} else {
				g.More = true
			}
		}
	}
	sort.SliceStable(gs, func(i, j int) bool {
		if len(gs[i].Indices) != len(gs[j].Indices) {
			return len(gs[i].Indices) > len(gs[j].Indices)
		}
		return gs[i].Key < gs[j].Key
	})
	return gs
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
