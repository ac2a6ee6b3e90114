package watch

import (
	"context"
	"time"
)

// Once reads every parking lot one time, as a round of the watch, and
// with scan also counts the error groups of each one whose messages the
// watch reads and that holds at most BigQueue messages (a scan is a browse
// pass), and returns the snapshots: what `parkinglot queues` and the TUI's
// queues screen show, by the same rules the watch exports. A one-time read
// has no history, so an oldest time the watch would date by the depth
// rule (from when it first saw the messages) is left unknown. Open's
// sessions are the caller's: Once does not close them.
func Once(ctx context.Context, o Options, scan bool) []Snapshot {
	w := New(o)
	w.Refresh(ctx)
	for _, sn := range w.Snapshots() {
		if !scan || ctx.Err() != nil {
			break
		}
		if sn.Found && sn.Depth > 0 && sn.Depth <= w.o.BigQueue {
			w.Scan(ctx, vhostName(o, sn.Vhost), sn.Queue)
		}
	}
	out := w.Snapshots()
	for i := range out {
		if out[i].Source != AgeHeader && out[i].Source != AgeFirstSeen {
			out[i].OldestParkedAt, out[i].Source = time.Time{}, AgeNone
		}
	}
	return out
}

// vhostName is the name a vhost was given in Options.Vhosts (Scan finds it
// by that name; "" for the connection's own).
func vhostName(o Options, vhost string) string {
	for _, v := range o.Vhosts {
		if v == vhost {
			return v
		}
	}
	return ""
}

// LotsFirst orders queues for a person: parking lots first, by Urgency
// (a and b are their snapshots), the other queues after them in the order
// they came.
func LotsFirst(aLot, bLot bool, a, b Snapshot, now time.Time) int {
	switch {
	case aLot != bLot:
		if aLot {
			return -1
		}
		return 1
	case !aLot:
		return 0
	}
	return Urgency(a, b, now)
}

// Urgency orders parking lots for a person: the one whose oldest message
// has waited longest first, then the deepest; empty ones last.
func Urgency(a, b Snapshot, now time.Time) int {
	switch {
	case (a.Depth > 0) != (b.Depth > 0):
		if a.Depth > 0 {
			return -1
		}
		return 1
	case a.OldestAge(now) != b.OldestAge(now):
		if a.OldestAge(now) > b.OldestAge(now) {
			return -1
		}
		return 1
	case a.Depth != b.Depth:
		if a.Depth > b.Depth {
			return -1
		}
		return 1
	}
	return 0
}
