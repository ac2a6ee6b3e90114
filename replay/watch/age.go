package watch

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/parkinglot/parkinglot/broker"
)

// arrival is a run of messages the watch first saw at one time.
type arrival struct {
	n  int64
	at time.Time
}

// depthAges is the age rule for a queue whose messages the watch does not
// read (AgeDepth): the messages are taken to leave in the order they came
// (a parking lot is read from its head), each run of new messages dated
// when the watch first saw the depth grow. The messages there when the
// watch first looked are dated then.
type depthAges struct {
	runs                   []arrival
	depth, arrivals        int64
	arrivalsKnown, started bool
}

// observe takes a new reading: the depth and, when the broker counts them,
// the arrivals so far. It returns the oldest message's first-seen time
// (zero when empty).
func (a *depthAges) observe(depth, arrivals int64, arrivalsKnown bool, now time.Time) time.Time {
	if !a.started {
		a.started = true
		a.runs = nil
		if depth > 0 {
			a.runs = []arrival{{depth, now}}
		}
	} else {
		in := depth - a.depth // at least what the depth grew by
		if arrivalsKnown && a.arrivalsKnown && arrivals >= a.arrivals && arrivals-a.arrivals > in {
			// Counted arrivals beyond the growth: as many left meanwhile.
			in = arrivals - a.arrivals
		}
		if in < 0 {
			in = 0
		}
		out := a.depth + in - depth
		a.take(out)
		if in > 0 {
			a.runs = append(a.runs, arrival{in, now})
		}
		// What the runs hold must be the depth (a purge, a counter reset).
		var sum int64
		for _, r := range a.runs {
			sum += r.n
		}
		switch {
		case sum > depth:
			a.take(sum - depth)
		case sum < depth:
			a.runs = append(a.runs, arrival{depth - sum, now})
		}
	}
	a.depth, a.arrivals, a.arrivalsKnown = depth, arrivals, arrivalsKnown
	if len(a.runs) == 0 {
		return time.Time{}
	}
	return a.runs[0].at
}

// take removes n messages from the oldest runs.
func (a *depthAges) take(n int64) {
	for n > 0 && len(a.runs) > 0 {
		if a.runs[0].n > n {
			a.runs[0].n -= n
			return
		}
		n -= a.runs[0].n
		a.runs = a.runs[1:]
	}
}

// headAges is the age rule for a queue whose head the watch reads: the
// head's own parked time when it has one, else the time the watch first
// saw that message at the head (only the current head's is kept).
type headAges struct {
	id string
	at time.Time
}

// observe returns the oldest parked time and whether it came from the
// message itself.
func (h *headAges) observe(id string, parkedAt, now time.Time) (time.Time, bool) {
	if !parkedAt.IsZero() {
		h.id, h.at = "", time.Time{}
		return parkedAt, true
	}
	if h.id != id || h.at.IsZero() {
		h.id, h.at = id, now
	}
	return h.at, false
}

// topGroups keeps the top largest groups, largest first (ties by name),
// each with its oldest parked time (oldest, by group key), and sums the
// rest into GroupOther. An error text that is itself "none"
// or "other" is exported quoted: two series with one label set would make
// every scrape fail.
func topGroups(counts map[string]int64, oldest map[string]time.Time, top int) []GroupCount {
	out := make([]GroupCount, 0, len(counts))
	// A group is a label Prometheus stores and alerts carry: credentials a
	// handler's error quoted (a database URL) are masked, and groups that
	// differ only by them are one.
	at := make(map[string]int, len(counts))
	for g, n := range counts {
		t := oldest[g]
		switch g {
		case "":
			g = GroupNone
		case GroupNone, GroupOther:
			g = strconv.Quote(g)
		default:
			g = broker.RedactText(g)
		}
		if i, ok := at[g]; ok {
			out[i].Count += n
			if o := out[i].OldestParkedAt; o.IsZero() || (!t.IsZero() && t.Before(o)) {
				out[i].OldestParkedAt = t
			}
			continue
		}
		at[g] = len(out)
		out = append(out, GroupCount{Group: g, Count: n, OldestParkedAt: t})
	}
	sortGroups(out)
	if top < 0 {
		top = 0
	}
	if len(out) <= top {
		return out
	}
	var other int64
	for _, g := range out[top:] {
		other += g.Count
	}
	return append(out[:top:top], GroupCount{Group: GroupOther, Count: other})
}

func sortGroups(gs []GroupCount) {
	slices.SortFunc(gs, func(a, b GroupCount) int {
		if a.Count != b.Count {
			return cmp.Compare(b.Count, a.Count)
		}
		return strings.Compare(a.Group, b.Group)
	})
}
