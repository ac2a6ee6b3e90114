package watch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/replay"
)

// Defaults of Options.
const (
	DefaultInterval     = 15 * time.Second
	DefaultScanInterval = 5 * time.Minute
	DefaultTopGroups    = 10
	// DefaultBigQueue: a parking lot deeper than this is scanned every
	// DefaultBigScanEvery scan intervals only (a scan is a browse pass).
	DefaultBigQueue     = 100_000
	DefaultBigScanEvery = 6
)

// Options configure a Watcher.
type Options struct {
	// Vhosts to watch; empty: the connection's own (Open with "").
	Vhosts []string
	// Queues are parking lots to watch besides those discovered (in every
	// vhost watched); a missing one keeps the watch not ready.
	Queues []string
	// NoDiscover watches Queues alone (the daemon's own parking lot).
	NoDiscover bool
	// Interval between reads of depth and head (DefaultInterval);
	// ScanInterval between group scans (DefaultScanInterval); TopGroups
	// groups are kept, the rest summed as GroupOther (DefaultTopGroups; a
	// negative value: no scans). BigQueue and BigScanEvery: see the
	// defaults.
	Interval     time.Duration
	ScanInterval time.Duration
	TopGroups    int
	BigQueue     int64
	BigScanEvery int
	// Open opens a session on a vhost ("": the connection's own). The
	// watch re-opens it when it was lost.
	Open func(ctx context.Context, vhost string) (*replay.Session, error)
	Log  *slog.Logger
	// Now is the clock (time.Now when nil).
	Now func() time.Time
	// HandsOff, when set, names parking lots whose messages must not be
	// read now (another action's pass works on them: a message the watch
	// held would be missing from it); their depth is still read.
	HandsOff func(queue string) bool
	// StateFile, when set, keeps the ages only the watch knows across a
	// restart (state.go): read by Run at its start, written after each
	// round.
	StateFile string
}

// Watcher reads parking lots every interval and keeps the last values.
// Its methods may be called from several goroutines.
type Watcher struct {
	o Options

	mu     sync.Mutex
	vhosts []*vhostState
	errors map[ErrorKind]int64
	ran    bool // a first round finished
	// saved is the state file's memory of parking lots not read yet since
	// the start, by stateKey; saveErr the last failure to write it.
	saved   map[string]savedQueue
	saveErr string
}

// vhostState is one vhost's session and parking lots.
type vhostState struct {
	name string // as given ("" the connection's own)

	// Guarded by Watcher.mu.
	sess         *replay.Session
	vhost        string // the session's vhost, once open
	connected    bool
	discovered   bool // a discovery succeeded
	discoveredAt time.Time
	listErr      error  // why the last discovery failed; nil after a success
	why          string // what keeps it from being ready
	queues       map[string]*queueState
}

// queueState is one parking lot's last values and the memory of its ages.
type queueState struct {
	snap  Snapshot
	named bool
	head  headAges
	depth depthAges
	reads bool // its messages may be read (replay.QueueDepth.Scannable)
	// republished: the messages the watch's own scans re-published into
	// the queue (refreshed near a delivery limit), in all and by time, kept
	// out of its arrivals; rawArrivals the broker's last count, whose fall
	// is a restarted counter.
	republished    int64
	republishedLog []arrival
	rawArrivals    int64
	// restored: the state file's memory was given to it (or had none);
	// depthAt is the depth rule's last date, which bounds a first-seen
	// age (the head may be new to the head, not to the queue).
	restored bool
	depthAt  time.Time
	// byHead: the head alone may be read (classic); else the scans read
	// it, and scanSoon asks for one at the next interval.
	byHead, scanSoon bool
	// busy: a head read or a scan of it is under way. The two never
	// overlap: a head given back while a pass consumes would be handed to
	// the pass last, and the pass's give-back would put it behind the rest.
	busy bool
	// scans counts the scans begun and ended: a depth read that saw it
	// change, or busy, overlapped a scan.
	scans uint64
	// others: the queue had consumers at the last read (another browse, a
	// replay, a service): no scan holds its messages from them, and no
	// head read interleaves with their passes.
	others bool
	// scanFrom is what the next scan is scheduled from: the last scan, or
	// after a failed one a time that makes it due at the next interval
	// (snap.LastScan, which is exported, moves only when a scan succeeds).
	scanFrom time.Time
}

// New makes a watcher; Run starts it.
func New(o Options) *Watcher {
	o = o.withDefaults()
	w := &Watcher{o: o, errors: map[ErrorKind]int64{}}
	for i, v := range o.Vhosts {
		if slices.Contains(o.Vhosts[:i], v) {
			continue // one state a vhost: a repeat would export every series twice
		}
		vs := &vhostState{name: v, vhost: v, queues: map[string]*queueState{}, why: "not connected yet"}
		for _, q := range o.Queues {
			vs.queues[q] = &queueState{named: true, snap: Snapshot{Vhost: v, Queue: q, Why: "named"}}
		}
		w.vhosts = append(w.vhosts, vs)
	}
	return w
}

func (o Options) withDefaults() Options {
	if o.Interval <= 0 {
		o.Interval = DefaultInterval
	}
	if o.ScanInterval <= 0 {
		o.ScanInterval = DefaultScanInterval
	}
	if o.TopGroups == 0 {
		o.TopGroups = DefaultTopGroups
	}
	if o.BigQueue <= 0 {
		o.BigQueue = DefaultBigQueue
	}
	if o.BigScanEvery <= 0 {
		o.BigScanEvery = DefaultBigScanEvery
	}
	if len(o.Vhosts) == 0 {
		o.Vhosts = []string{""}
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// discoverEvery bounds how often the queue listing (one management request,
// plus a route lookup per dead-lettering queue) is made.
const discoverEvery = time.Minute

// listStaleAfter is how long after its last listing a watch whose listing
// keeps failing is no longer ready: it still reads the parking lots it
// knows, but a new one would go unwatched and unalerted.
const listStaleAfter = 2 * discoverEvery

// Run reads until ctx ends: a first round at once, then one every
// Interval; group scans run beside the rounds, one queue at a time, so a
// long scan never delays a depth. It returns ctx's error: a broker that
// goes away is reported in Health and re-dialled, never returned. Every
// session it opened is closed when it returns.
func (w *Watcher) Run(ctx context.Context) error {
	defer w.closeSessions()
	w.loadState()
	defer w.save()
	var wg sync.WaitGroup
	if w.o.TopGroups >= 0 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.scanLoop(ctx)
		}()
	}
	t := time.NewTicker(w.o.Interval)
	defer t.Stop()
	for {
		w.Refresh(ctx)
		w.save()
		select {
		case <-ctx.Done():
			wg.Wait()
			return ctx.Err()
		case <-t.C:
		}
	}
}

func (w *Watcher) closeSessions() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, v := range w.vhosts {
		if v.sess != nil {
			_ = v.sess.Close()
			v.sess = nil
		}
		v.connected = false
	}
}

// Refresh reads every vhost once now: the parking lots (when due), each
// one's depth and head. Group scans are Run's (or Scan's).
func (w *Watcher) Refresh(ctx context.Context) {
	for _, v := range w.vhosts {
		w.refreshVhost(ctx, v)
	}
	w.mu.Lock()
	w.ran = true
	w.mu.Unlock()
}

func (w *Watcher) count(k ErrorKind) {
	w.mu.Lock()
	w.errors[k]++
	w.mu.Unlock()
}

// callTimeout bounds one read, so that a redial (up to a minute) or a
// broker that does not answer never holds a round for long.
func (w *Watcher) callTimeout() time.Duration {
	return max(w.o.Interval, 10*time.Second)
}

// session returns the vhost's session, opening it when needed.
func (w *Watcher) session(ctx context.Context, v *vhostState) (*replay.Session, error) {
	w.mu.Lock()
	s := v.sess
	w.mu.Unlock()
	if s != nil {
		return s, nil
	}
	octx, cancel := context.WithTimeout(ctx, w.callTimeout())
	defer cancel()
	s, err := w.o.Open(octx, v.name)
	if err != nil {
		return nil, err
	}
	w.mu.Lock()
	v.sess, v.vhost = s, s.Vhost()
	for _, q := range v.queues {
		q.snap.Vhost = v.vhost
	}
	w.mu.Unlock()
	return s, nil
}

func (w *Watcher) refreshVhost(ctx context.Context, v *vhostState) {
	s, err := w.session(ctx, v)
	if err != nil {
		if ctx.Err() != nil {
			return
		}
		w.count(ErrConnect)
		w.o.Log.Warn("watch: cannot connect", "vhost", v.name, "err", err)
		w.mu.Lock()
		v.connected, v.why = false, "not connected: "+err.Error()
		w.mu.Unlock()
		return
	}
	now := w.o.Now()
	w.mu.Lock()
	due := !w.o.NoDiscover && (!v.discovered || now.Sub(v.discoveredAt) >= max(discoverEvery, w.o.Interval))
	w.mu.Unlock()
	if due {
		w.discover(ctx, s, v, now)
	}
	w.mu.Lock()
	names := make([]string, 0, len(v.queues))
	for q := range v.queues {
		names = append(names, q)
	}
	w.mu.Unlock()
	slices.Sort(names)
	connected := true
	var lastErr error
	for _, q := range names {
		if err := w.readQueue(ctx, s, v, q); err != nil && !errors.Is(err, broker.ErrNotFound) {
			connected, lastErr = false, err
		}
	}
	if ctx.Err() != nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	v.connected = connected
	switch {
	case !connected:
		v.why = "cannot read the broker: " + lastErr.Error()
	case !w.o.NoDiscover && !v.discovered:
		v.why = "the parking lots were not discovered yet (the management API did not answer)"
	case !w.o.NoDiscover && v.listErr != nil && now.Sub(v.discoveredAt) >= max(listStaleAfter, 2*w.o.Interval):
		v.why = fmt.Sprintf("the parking lots were last listed %s ago (listing them fails: %v); a new one would not be watched",
			now.Sub(v.discoveredAt).Round(time.Second), v.listErr)
	default:
		v.why = ""
		for _, q := range names {
			if st := v.queues[q]; st != nil && st.named && !st.snap.Found {
				v.why = fmt.Sprintf("no queue %q in vhost %q", q, v.vhost)
				break
			}
		}
	}
}

// discover lists the vhost's parking lots the way `queues` marks them.
// Queues no longer there (and not named) stop being watched; one still
// there stays watched even if it is not marked this time (a route lookup
// that failed can leave a dead-letter target unmarked: its series would
// vanish and its alert resolve, then page again).
func (w *Watcher) discover(ctx context.Context, s *replay.Session, v *vhostState, now time.Time) {
	dctx, cancel := context.WithTimeout(ctx, w.callTimeout())
	defer cancel()
	rows, err := s.Queues(dctx)
	if err != nil {
		if ctx.Err() == nil {
			w.count(ErrDiscover)
			w.o.Log.Warn("watch: cannot list the parking lots", "vhost", v.vhost, "err", err)
			w.mu.Lock()
			v.listErr = err
			w.mu.Unlock()
		}
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	v.listErr = nil
	found := map[string]bool{}
	for _, r := range rows {
		found[r.Name] = true
		if !r.ParkingLot || r.Type == "stream" {
			continue
		}
		st, ok := v.queues[r.Name]
		if !ok {
			st = &queueState{snap: Snapshot{Vhost: v.vhost, Queue: r.Name}}
			v.queues[r.Name] = st
		}
		if !st.named {
			st.snap.Why = r.Why
		}
	}
	for name, st := range v.queues {
		if !st.named && !found[name] {
			delete(v.queues, name)
		}
	}
	v.discovered, v.discoveredAt = true, now
}

// readQueue reads one parking lot's depth and head.
func (w *Watcher) readQueue(ctx context.Context, s *replay.Session, v *vhostState, queue string) error {
	rctx, cancel := context.WithTimeout(ctx, w.callTimeout())
	defer cancel()
	var scans0 uint64
	var busy0 bool
	w.mu.Lock()
	if st := v.queues[queue]; st != nil {
		scans0, busy0 = st.scans, st.busy
	}
	w.mu.Unlock()
	d, err := s.Depth(rctx, queue)
	now := w.o.Now()
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		w.mu.Lock()
		defer w.mu.Unlock()
		st := v.queues[queue]
		if st == nil {
			return nil
		}
		if errors.Is(err, broker.ErrNotFound) {
			if !st.named {
				delete(v.queues, queue)
				return err
			}
			st.snap = Snapshot{Vhost: v.vhost, Queue: queue, Why: st.snap.Why, Err: err.Error(), LastRead: now}
			return err
		}
		w.errors[ErrDepth]++
		st.snap.Err = err.Error()
		return err
	}
	var head replay.Summary
	var headOK bool
	var headErr error
	w.mu.Lock()
	st := v.queues[queue]
	if st != nil && d.ReadyOnly && d.Depth < st.snap.Depth && (busy0 || st.busy || st.scans != scans0) {
		// Counted while our own scan held messages unacknowledged: they
		// are not in a ready count, and are still parked. The depth read
		// before the scan stands until a read that no scan overlaps.
		d.Depth = st.snap.Depth
	}
	if d.Type == "" && st != nil {
		// The management API did not answer this time: the type read last.
		d.Type = st.snap.Type
	}
	reads, byHead := d.Scannable(), d.HeadReadHarmless()
	if w.o.HandsOff != nil && w.o.HandsOff(queue) {
		reads = false
	}
	readHead := st != nil && byHead && d.Depth > 0 && d.Consumers == 0 && !st.busy
	if readHead {
		st.busy = true
	}
	w.mu.Unlock()
	if readHead {
		head, headOK, headErr = s.Head(rctx, queue, d)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if readHead {
		st.busy = false
	}
	if headErr != nil && ctx.Err() != nil {
		return nil
	}
	if st = v.queues[queue]; st == nil {
		return nil
	}
	w.restore(v, queue, st)
	// The management API's count lags; the head read asks the queue.
	if errors.Is(headErr, broker.ErrOthersConsume) {
		readHead, headErr = false, nil
		d.Consumers = max(d.Consumers, 1)
	}
	st.others = d.Consumers > 0
	st.byHead = byHead
	sn := &st.snap
	prevDepth := sn.Depth
	sn.Vhost, sn.Found, sn.Type, sn.Depth = v.vhost, true, d.Type, d.Depth
	d.Arrivals = st.arrivals(d, busy0 || st.busy || st.scans != scans0)
	sn.Arrivals, sn.ArrivalsKnown = d.Arrivals, d.ArrivalsKnown
	sn.Republished, sn.republishedLog = st.republished, st.republishedLog
	if d.LimitKnown {
		sn.DeliveryLimit, sn.LimitKnown = d.DeliveryLimit.Limit, true
		if d.DeliveryLimit.Unlimited() {
			sn.DeliveryLimit = -1
		}
	}
	sn.ReadsMessages, st.reads = reads, reads
	sn.Err = ""
	if !reads {
		sn.TopGroups, sn.Scanned, sn.LastScan = nil, 0, time.Time{}
		st.scanFrom = time.Time{}
	}
	// The depth rule is kept up to date for every queue: it answers where
	// no message is read, and until a head was read at all.
	byDepth := st.depth.observe(d.Depth, d.Arrivals, d.ArrivalsKnown, now)
	st.depthAt = byDepth
	useDepth := func() {
		sn.OldestParkedAt, sn.OldestFromHeader, sn.OldestID, sn.Source = byDepth, false, "", AgeDepth
		if byDepth.IsZero() {
			sn.Source = AgeNone
		}
	}
	defer func() {
		if d.Depth > 0 && (sn.Source == AgeNone || sn.Source == AgeDepth) {
			useDepth() // no head read yet (a scan to come, others consuming)
		}
	}()
	// Others consuming (a replay, a service) while the depth fell may
	// have taken the message the last head read dated: the watch cannot
	// read the head now, so the depth rule's later date answers until it
	// can (README: the age where the watch cannot read harmlessly).
	headGone := st.others && d.Depth < prevDepth && byDepth.After(sn.OldestParkedAt)
	switch {
	case !reads:
		useDepth()
	case d.Depth > 0 && headGone && (!byHead || !readHead):
		useDepth()
		st.scanSoon = !byHead // a quorum head: the next scan, once the others are gone
	case d.Depth == 0:
		sn.OldestParkedAt, sn.OldestFromHeader, sn.OldestID, sn.Source = time.Time{}, false, "", AgeNone
		st.head = headAges{}
	case !byHead:
		// A quorum queue's head is read by the scans (the first message
		// of each pass); a depth that fell may have taken it: scan again
		// soon.
		if d.Depth < prevDepth {
			st.scanSoon = true
		}
	case !readHead:
		// Not read this time (a scan under way, or other consumers): the
		// last head read stands.
	case headErr != nil:
		w.errors[ErrHead]++
		sn.Err = headErr.Error()
		return headErr // the depth is new, the age the last one read
	case !headOK:
		// Nothing ready to read (others hold the messages): the last head
		// read stands.
	default:
		at, fromHeader := st.firstSeen(head.ID, head.ParkedAt, now)
		sn.OldestParkedAt, sn.OldestFromHeader, sn.OldestID = at, fromHeader, head.ID
		sn.Source = AgeFirstSeen
		if fromHeader {
			sn.Source = AgeHeader
		}
	}
	if reads && d.Depth == 0 {
		// An empty parking lot has no groups; no pass is needed to say so.
		sn.TopGroups, sn.Scanned, sn.LastScan = []GroupCount{}, 0, now
		st.scanFrom = now
	}
	sn.LastRead = now
	return nil
}

// Snapshots are the last values of every parking lot watched, by vhost
// and queue.
func (w *Watcher) Snapshots() []Snapshot {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []Snapshot
	for _, v := range w.vhosts {
		for _, st := range v.queues {
			sn := st.snap
			sn.TopGroups = slices.Clone(sn.TopGroups)
			out = append(out, sn)
		}
	}
	slices.SortStableFunc(out, func(a, b Snapshot) int {
		if c := strings.Compare(a.Vhost, b.Vhost); c != 0 {
			return c
		}
		return strings.Compare(a.Queue, b.Queue)
	})
	// The connection's own vhost ("") and the same vhost named: one
	// parking lot, exported once (Prometheus refuses a repeated series).
	return slices.CompactFunc(out, func(a, b Snapshot) bool { return a.Vhost == b.Vhost && a.Queue == b.Queue })
}

// Health is the watch's own state: ready once a round read every vhost
// and found every parking lot named.
func (w *Watcher) Health() Health {
	w.mu.Lock()
	defer w.mu.Unlock()
	h := Health{Ready: w.ran, Errors: maps.Clone(w.errors)}
	if !w.ran {
		h.Why = "no read yet"
	}
	for _, v := range w.vhosts {
		if v.why != "" || !v.connected {
			h.Ready = false
			if h.Why == "" {
				h.Why = v.why
			}
		}
	}
	if h.Why == "" && !h.Ready {
		h.Why = "not connected"
	}
	return h
}

// arrivals is the broker's count of messages published into the queue
// less the watch's own refreshes, never falling while the counter runs:
// the management API counts a scan's re-publishes seconds after the scan
// ended, so a read during or just after one keeps the last value. A
// broker count that fell is a restarted counter (its node restarted):
// counted afresh.
func (st *queueState) arrivals(d replay.QueueDepth, scanOverlapped bool) int64 {
	if !d.ArrivalsKnown {
		return d.Arrivals
	}
	restarted := d.Arrivals < st.rawArrivals
	if restarted {
		st.republished, st.republishedLog = 0, nil
	}
	st.rawArrivals = d.Arrivals
	n := max(d.Arrivals-st.republished, 0)
	if !restarted && st.snap.ArrivalsKnown && (scanOverlapped || n < st.snap.Arrivals) {
		return st.snap.Arrivals
	}
	return n
}

// noteRepublished counts n messages a scan re-published at now, keeping
// the times of the last ArrivalsWindow (and a minute) for the dashboard's
// last hour.
func (st *queueState) noteRepublished(n int, now time.Time) {
	if n <= 0 {
		return
	}
	st.republished += int64(n)
	log := slices.DeleteFunc(slices.Clone(st.republishedLog), func(a arrival) bool { return now.Sub(a.at) > ArrivalsWindow+time.Minute })
	st.republishedLog = append(log, arrival{int64(n), now})
}

// firstSeen dates the head: its own parked time, else when the watch
// first saw it at the head, or the depth rule's date when that is earlier
// (a head that changed by a reorder or a refresh was in the queue before:
// its age must not start again).
func (st *queueState) firstSeen(id string, parkedAt, now time.Time) (time.Time, bool) {
	at, fromHeader := st.head.observe(id, parkedAt, now)
	if !fromHeader && !st.depthAt.IsZero() && st.depthAt.Before(at) {
		at = st.depthAt
	}
	return at, fromHeader
}

// save writes the state file, logging a failure once until it changes.
func (w *Watcher) save() {
	err := w.saveState(w.o.Now())
	msg := ""
	if err != nil {
		msg = err.Error()
	}
	w.mu.Lock()
	changed := msg != w.saveErr
	w.saveErr = msg
	w.mu.Unlock()
	if err != nil && changed {
		w.o.Log.Warn("watch: state file not written: a restart dates what no message dates afresh", "path", w.o.StateFile, "err", err)
	}
}
