package ui

import (
	"slices"
	"sort"
	"strings"
	"time"
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
