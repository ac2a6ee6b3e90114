package watch

import (
	"context"
	"errors"
	"time"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/replay"
)

// The group scans: a harmless browse pass of one parking lot at a time,
// the most overdue first, counting its messages by error group.

// scanLoop scans, one queue at a time, the parking lot whose scan is the
// most overdue, and sleeps until the next one is due.
func (w *Watcher) scanLoop(ctx context.Context) {
	for {
		wait := w.scanNext(ctx)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// scanNext scans the most overdue parking lot, if one is due, and returns
// how long to wait before looking again.
func (w *Watcher) scanNext(ctx context.Context) time.Duration {
	now := w.o.Now()
	w.mu.Lock()
	var best *vhostState
	var bestQ string
	var bestDue time.Time
	for _, v := range w.vhosts {
		if v.sess == nil || !v.connected {
			continue
		}
		for name, st := range v.queues {
			if !st.reads || !st.snap.Found || st.snap.Depth == 0 || st.busy || st.others {
				continue
			}
			every := w.o.ScanInterval
			if st.snap.Depth > w.o.BigQueue {
				every *= time.Duration(w.o.BigScanEvery)
			}
			due := st.scanFrom.Add(every)
			if st.scanSoon && st.snap.Depth <= w.o.BigQueue {
				due = st.scanFrom.Add(w.o.Interval)
			}
			if best == nil || due.Before(bestDue) {
				best, bestQ, bestDue = v, name, due
			}
		}
	}
	w.mu.Unlock()
	poll := min(w.o.Interval, time.Second)
	if best == nil || bestDue.After(now) {
		return poll
	}
	w.Scan(ctx, best.name, bestQ)
	return 0
}

// scanSettle bounds the wait after a scan for its give-back to be applied.
const scanSettle = 10 * time.Second

// Scan counts the messages of one parking lot by error group now, with a
// harmless browse pass (vhost as given in Options.Vhosts). It does
// nothing for a queue whose messages the watch does not read.
func (w *Watcher) Scan(ctx context.Context, vhost, queue string) {
	var v *vhostState
	w.mu.Lock()
	for _, vs := range w.vhosts {
		if vs.name == vhost {
			v = vs
		}
	}
	// Another consumer (a replay's pass, a service) would miss the
	// messages a scan holds.
	if v == nil || v.sess == nil || v.queues[queue] == nil || !v.queues[queue].reads || v.queues[queue].busy || v.queues[queue].others {
		w.mu.Unlock()
		return
	}
	s, busy := v.sess, v.queues[queue]
	busy.busy = true
	busy.scans++
	w.mu.Unlock()
	counts, oldest := map[string]int64{}, map[string]time.Time{}
	var seen int64
	// first, and the oldest parked time of any message: a pass's order
	// may not be the parking order (a refresh puts messages behind), and
	// the oldest message's age must not fall while it is still there.
	var first, oldestMsg replay.Summary
	// Alone: the consumer count the scan was chosen by can be seconds old
	// (the management API's); the pass asks the queue itself.
	b, err := s.Browse(ctx, replay.BrowseOptions{Queue: queue, StreamOnly: true, Alone: true, OnBatch: func(batch []replay.Summary) {
		if seen == 0 && len(batch) > 0 {
			first = batch[0]
		}
		for _, m := range batch {
			counts[m.Group]++
			seen++
			if !m.ParkedAt.IsZero() && (oldestMsg.ParkedAt.IsZero() || m.ParkedAt.Before(oldestMsg.ParkedAt)) {
				oldestMsg = m
			}
			// Not the timestamp a message may fall back on: that can be
			// its first publishing, long before it was parked, and would
			// make a new error look old.
			if at := m.Facts.ParkedAt; !at.IsZero() {
				if o, ok := oldest[m.Group]; !ok || at.Before(o) {
					oldest[m.Group] = at
				}
			}
		}
	}})
	if err == nil {
		// Every message given back must be ready again before the next
		// head read (see replay.Session.AwaitReady).
		s.AwaitReady(context.WithoutCancel(ctx), queue, int(seen), scanSettle)
	}
	now := w.o.Now()
	w.mu.Lock()
	defer w.mu.Unlock()
	busy.busy = false
	busy.scans++
	st := v.queues[queue]
	if st != nil && b != nil {
		st.noteRepublished(b.Report.Refreshed, now)
	}
	if errors.Is(err, broker.ErrOthersConsume) {
		if st != nil { // not an error: tried again once the others are gone
			st.others = true
			st.scanFrom = now.Add(-w.o.ScanInterval + w.o.Interval)
		}
		return
	}
	if err != nil {
		if ctx.Err() == nil {
			w.errors[ErrScan]++
			w.o.Log.Warn("watch: group scan failed", "vhost", v.vhost, "queue", queue, "err", err)
			if st != nil {
				// Not scanned again before the next interval.
				st.scanFrom = now.Add(-w.o.ScanInterval + w.o.Interval)
			}
		}
		return
	}
	if st == nil {
		return
	}
	st.snap.TopGroups, st.snap.Scanned, st.snap.LastScan = topGroups(counts, oldest, w.o.TopGroups), seen, now
	st.scanFrom = now
	st.scanSoon = false
	if !st.byHead && seen > 0 {
		if !oldestMsg.ParkedAt.IsZero() {
			first = oldestMsg
		}
		at, fromHeader := st.firstSeen(first.ID, first.ParkedAt, now)
		sn := &st.snap
		sn.OldestParkedAt, sn.OldestFromHeader, sn.OldestID = at, fromHeader, first.ID
		sn.Source = AgeFirstSeen
		if fromHeader {
			sn.Source = AgeHeader
		}
	}
}
