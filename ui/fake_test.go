package ui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/replay"
	"github.com/parkinglot/parkinglot/replay/watch"
	"github.com/parkinglot/parkinglot/retrycore"
)

// fakeBackend is the TUI's Backend for model tests: queues and messages in
// memory. It is not a broker mock — the real broker is covered by the tmux
// end-to-end test — only a way to drive the screens.
type fakeBackend struct {
	mu       sync.Mutex
	queues   []QueueRow
	lots     []watch.Snapshot // ParkingLots' answer
	lastHour map[string]int64 // and its arrivals in the last hour
	scans    int              // ParkingLots reads with scan
	// quorum are queues Browse says are quorum queues with a delivery
	// limit of 20 (the RabbitMQ 4.x default).
	quorum map[string]bool
	// arrivals feed Tail (nil: none ever arrives); tailErr fails it.
	arrivals chan replay.Summary
	tailErr  error
	gaps     chan replay.TailGap // feed Tail's lost connections
	scanGate chan struct{}       // closed: a read with scan may end
	defaults map[string]replay.ParkingLot
	messages map[string][]fakeMessage
	// batch is how many summaries one OnBatch call carries.
	batch int
	// plan, when set, answers Plan; otherwise one derives from the origins.
	plan    *Plan
	planErr error
	// gate, when set, makes Replay wait for it (or ctx) after each message.
	gate chan struct{}
	// failIDs fail to replay with this error text.
	failIDs map[string]string
	// calls records what was asked, for assertions.
	calls   []string
	lastReq ActionRequest
	dir     string
	// browseErr fails every browse; holdBrowse makes a browse hold its
	// messages until ctx ends, then record that they were given back.
	browseErr  error
	holdBrowse bool
	// holdAfter, with holdBrowse, streams the first holdAfter messages
	// before holding (a browse interrupted half-way).
	holdAfter int
	gaveBack  bool
	// searchGate, when set, holds a search before each queue after the
	// first until it is closed (or ctx ends).
	searchGate chan struct{}
	importID   string // the ids an import gives its messages, before "-N" ("imported" when empty)
	// cluster answers Cluster (zero: a single broker that did not say).
	cluster    Cluster
	clusterErr error
}

type fakeMessage struct {
	sum replay.Summary
	msg broker.Message
}

var testNow = time.Date(2025, 3, 14, 9, 26, 53, 0, time.UTC)

func newFakeBackend(dir string) *fakeBackend {
	return &fakeBackend{messages: map[string][]fakeMessage{}, batch: 50, failIDs: map[string]string{}, dir: dir}
}

// add parks a message in queue.
func (f *fakeBackend) add(queue, id, errText string, age time.Duration, body string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	parked := testNow.Add(-age)
	origin := &retrycore.Origin{Destination: retrycore.Destination{Exchange: "demo.main", RoutingKey: "payment.execute"},
		Source: retrycore.HeaderOriginalExchange, Queue: "demo.main.queue"}
	h := amqp.Table{
		retrycore.HeaderLastError:          errText,
		retrycore.HeaderRetryCount:         int32(3),
		retrycore.HeaderOriginalExchange:   "demo.main",
		retrycore.HeaderOriginalRoutingKey: "payment.execute",
		retrycore.HeaderFailureKind:        retrycore.KindRetriesExhausted,
		retrycore.HeaderParkedAt:           parked,
		"x-death": []any{
			amqp.Table{"queue": "demo.retry.3s", "reason": "expired", "count": int64(2), "exchange": "demo.retry", "routing-keys": []any{"payment.retry.3s"}, "time": parked.Add(-3 * time.Second)},
			amqp.Table{"queue": "demo.retry.1s", "reason": "expired", "count": int64(1), "exchange": "demo.retry", "routing-keys": []any{"payment.retry.1s"}, "time": parked.Add(-5 * time.Second)},
		},
	}
	m := broker.Message{
		Properties: broker.Properties{MessageID: id, ContentType: "application/json", DeliveryMode: 2, Timestamp: parked.Add(-10 * time.Second)},
		Headers:    h, Body: []byte(body), Exchange: "demo.error", RoutingKey: "payment.error",
	}
	facts := retrycore.Decode(h)
	sum := replay.Summary{
		Index: len(f.messages[queue]), ID: id, Exchange: m.Exchange, RoutingKey: m.RoutingKey,
		ContentType: "application/json", BodySize: len(body), Facts: facts, Origin: origin,
		Group: retrycore.GroupKey(errText), ParkedAt: parked,
	}
	f.messages[queue] = append(f.messages[queue], fakeMessage{sum: sum, msg: m})
}

func (f *fakeBackend) record(s string) {
	f.mu.Lock()
	f.calls = append(f.calls, s)
	f.mu.Unlock()
}

func (f *fakeBackend) called(prefix string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, c := range f.calls {
		if strings.HasPrefix(c, prefix) {
			n++
		}
	}
	return n
}

// holdSearches makes every search wait before each queue after the first
// until gate is closed (or its ctx ends); it returns gate.
func (f *fakeBackend) holdSearches(gate chan struct{}) chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.searchGate = gate
	return gate
}

// calledWith counts the calls that contain part.
func (f *fakeBackend) calledWith(part string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, c := range f.calls {
		if strings.Contains(c, part) {
			n++
		}
	}
	return n
}

// callList is every call so far, for a failure's message.
func (f *fakeBackend) callList() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.calls)
}

func (f *fakeBackend) Describe() string { return "amqp://guest:xxxxx@127.0.0.1:5672/ vhost /" }

func (f *fakeBackend) Cluster(context.Context) (Cluster, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.cluster, f.clusterErr
}

func (f *fakeBackend) ParkingLotDefaults(queue string) replay.ParkingLot {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.defaults[queue]
}

// ParkingLots answers f.lots (their groups only with scan) and
// f.lastHour when set, else what a watch read of the parking lots'
// messages would say: their depth and oldest parked time. scans counts
// the reads with scan; a read with scan waits for f.scanGate when set.
func (f *fakeBackend) ParkingLots(ctx context.Context, scan bool, busy []string) (Lots, error) {
	if scan {
		f.mu.Lock()
		f.scans++
		gate := f.scanGate
		f.mu.Unlock()
		if gate != nil {
			select {
			case <-gate:
			case <-ctx.Done():
				return Lots{}, ctx.Err()
			}
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.lots != nil {
		out := append([]watch.Snapshot(nil), f.lots...)
		for i := range out {
			if !scan {
				out[i].TopGroups = nil
			}
		}
		return Lots{Snapshots: out, LastHour: f.lastHour}, nil
	}
	var out []watch.Snapshot
	for _, q := range f.queues {
		if !q.ParkingLot {
			continue
		}
		sn := watch.Snapshot{Queue: q.Name, Found: true, Depth: int64(len(f.messages[q.Name]))}
		for _, m := range f.messages[q.Name] {
			if sn.OldestParkedAt.IsZero() || m.sum.ParkedAt.Before(sn.OldestParkedAt) {
				sn.OldestParkedAt, sn.Source = m.sum.ParkedAt, watch.AgeHeader
			}
		}
		if scan { // the largest group, the rest as other (TopGroups 1)
			groups := map[string]int64{}
			for _, m := range f.messages[q.Name] {
				groups[m.sum.Group]++
			}
			var top watch.GroupCount
			for g, n := range groups {
				if n > top.Count || n == top.Count && g < top.Group {
					top = watch.GroupCount{Group: g, Count: n}
				}
			}
			if top.Count > 0 {
				sn.TopGroups = []watch.GroupCount{top}
			}
			if rest := sn.Depth - top.Count; rest > 0 {
				sn.TopGroups = append(sn.TopGroups, watch.GroupCount{Group: watch.GroupOther, Count: rest})
			}
		}
		out = append(out, sn)
	}
	return Lots{Snapshots: out, LastHour: f.lastHour}, nil
}

func (f *fakeBackend) Queues(context.Context) ([]QueueRow, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	rows := append([]QueueRow(nil), f.queues...)
	for i := range rows {
		if ms, ok := f.messages[rows[i].Name]; ok {
			rows[i].Messages = int64(len(ms))
		}
	}
	return rows, nil
}

func (f *fakeBackend) Browse(ctx context.Context, req BrowseRequest) (BrowseResult, error) {
	f.record("browse " + req.Queue)
	if req.Filter != "" {
		f.record("filter " + req.Filter)
	}
	f.mu.Lock()
	browseErr, hold, after := f.browseErr, f.holdBrowse, f.holdAfter
	f.mu.Unlock()
	if browseErr != nil {
		return BrowseResult{}, browseErr
	}
	if hold {
		if after > 0 {
			f.mu.Lock()
			batch := make([]replay.Summary, 0, after)
			for i, m := range f.messages[req.Queue][:after] {
				s := m.sum
				s.Index = i
				batch = append(batch, s)
			}
			f.mu.Unlock()
			req.OnBatch(batch)
		}
		<-ctx.Done()
		time.Sleep(20 * time.Millisecond) // giving back takes a moment
		f.mu.Lock()
		f.gaveBack = true
		f.mu.Unlock()
		return BrowseResult{}, ctx.Err()
	}
	f.mu.Lock()
	var ms []fakeMessage
	for _, m := range f.messages[req.Queue] {
		// The fake's "expr": a message id prefix after "id starts ".
		if p, ok := strings.CutPrefix(req.Filter, "id starts "); !ok || strings.HasPrefix(m.sum.ID, p) {
			ms = append(ms, m)
		}
	}
	f.mu.Unlock()
	src := &fakeSource{}
	for i := 0; i < len(ms); i += f.batch {
		end := min(i+f.batch, len(ms))
		batch := make([]replay.Summary, 0, end-i)
		for j, m := range ms[i:end] {
			s := m.sum
			s.Index = i + j
			batch = append(batch, s)
			src.msgs = append(src.msgs, m.msg)
		}
		if err := ctx.Err(); err != nil {
			return BrowseResult{}, err
		}
		req.OnBatch(batch)
	}
	facts := broker.QueueFacts{Name: req.Queue, Type: "classic", Ready: len(ms)}
	f.mu.Lock()
	if f.quorum[req.Queue] {
		facts.Type, facts.LimitKnown, facts.DeliveryLimit = "quorum", true, broker.DeliveryLimit{Limit: 20, Source: "RabbitMQ 4.x default"}
	}
	f.mu.Unlock()
	return BrowseResult{Messages: src, Facts: facts, Report: broker.PassReport{Seen: len(ms), GivenBack: len(ms)}}, nil
}

// Search runs the query's filter (the engine's own, over the fake's
// messages) on each parking lot in turn, as replay.Session.Search does.
// searchGate, when set, makes it wait for it (or ctx) before each queue
// after the first.
// Tail hands on what tests send on f.arrivals until ctx ends; with
// f.tailErr it fails at once (a lot that cannot be tapped).
func (f *fakeBackend) Tail(ctx context.Context, queue string, onReady func(), onArrival func(replay.Summary), onGap func(replay.TailGap)) error {
	f.mu.Lock()
	arrivals, terr := f.arrivals, f.tailErr
	f.mu.Unlock()
	if terr != nil {
		return terr
	}
	onReady()
	for {
		select {
		case <-ctx.Done():
			return nil
		case s := <-arrivals:
			onArrival(s)
		case g := <-f.gaps:
			onGap(g)
		}
	}
}

func (f *fakeBackend) Search(ctx context.Context, req SearchRequest) (replay.SearchResult, error) {
	f.record("search " + req.Query.Filter + " in [" + strings.Join(req.Queues, ",") + "]")
	flt, err := replay.CompileFilter(req.Query.Filter)
	if err != nil {
		return replay.SearchResult{}, err
	}
	f.mu.Lock()
	var queues []string
	for _, q := range f.queues {
		if q.ParkingLot && (len(req.Queues) == 0 || slices.Contains(req.Queues, q.Name)) {
			queues = append(queues, q.Name)
		}
	}
	gate := f.searchGate
	f.mu.Unlock()
	keep := req.Keep
	switch {
	case keep == 0:
		keep = replay.DefaultSearchKeep
	case keep < 0:
		keep = 0
	}
	var res replay.SearchResult
	for n, q := range queues {
		if slices.Contains(req.Skip, q) {
			res.Queues = append(res.Queues, replay.QueueSearch{Queue: q, Err: replay.ErrSearchSkipped})
			continue
		}
		if gate != nil && n > 0 {
			select {
			case <-gate:
			case <-ctx.Done():
				return res, ctx.Err()
			}
		}
		if err := ctx.Err(); err != nil {
			return res, err
		}
		if req.OnQueue != nil {
			req.OnQueue(q)
		}
		f.mu.Lock()
		ms := append([]fakeMessage(nil), f.messages[q]...)
		f.mu.Unlock()
		qs := replay.QueueSearch{Queue: q, Scanned: len(ms)}
		for i, m := range ms {
			sum := m.sum
			sum.Index = i
			ok, err := flt.Match(m.msg, sum, q, testNow)
			if err != nil || !ok {
				continue
			}
			qs.Matched++
			res.Matched++
			if len(res.Matches) < keep {
				res.Matches = append(res.Matches, replay.SearchMatch{Queue: q, Summary: sum})
			}
			if req.OnMatch != nil {
				req.OnMatch(q, sum)
			}
		}
		res.Queues = append(res.Queues, qs)
	}
	return res, nil
}

type fakeSource struct{ msgs []broker.Message }

func (s *fakeSource) Get(i int) (broker.Message, error) {
	if i < 0 || i >= len(s.msgs) {
		return broker.Message{}, fmt.Errorf("no message %d", i)
	}
	return s.msgs[i], nil
}
func (s *fakeSource) Close() error { return nil }

func (f *fakeBackend) Plan(_ context.Context, req ActionRequest) (Plan, error) {
	req.Limit = 0 // as the engine's plan: it counts every message chosen
	f.record(fmt.Sprintf("plan %s %d to=%v target=%s", req.Queue, len(f.chosen(req)), req.To, req.Target))
	if f.planErr != nil {
		return Plan{}, f.planErr
	}
	if f.plan != nil {
		return *f.plan, nil
	}
	r := PlannedRoute{Destination: retrycore.Destination{Exchange: "demo.main", RoutingKey: "payment.execute"},
		Source: retrycore.HeaderOriginalExchange, Messages: len(f.chosen(req)), Queues: []string{"demo.main.queue"}, Known: true, FailedQueues: []string{"demo.main.queue"}}
	switch {
	case req.To != nil:
		r.Destination, r.Source, r.Queues = *req.To, "typed destination", nil
	case req.Target == replay.TargetQueue:
		r.Destination = retrycore.Destination{RoutingKey: "demo.main.queue"}
		r.Source = "the failed queue alone"
	}
	return Plan{Messages: len(f.chosen(req)), Routes: []PlannedRoute{r}}, nil
}

// chosen is the id of each message the request selects, in queue order:
// every message that carries a chosen id, the first req.Limit of them when
// it is set (as the engine's pass finds them).
func (f *fakeBackend) chosen(req ActionRequest) []string {
	want := func(id string) bool { return slices.Contains(req.Select.IDs, id) }
	if req.Select.Chosen != nil {
		want = func(id string) bool { in, _ := req.Select.Chosen.Contains(id); return in }
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, m := range f.messages[req.Queue] {
		if req.Limit > 0 && len(out) == req.Limit {
			break
		}
		if want(m.sum.ID) {
			out = append(out, m.sum.ID)
		}
	}
	return out
}

// remove takes the chosen messages out of queue (the first one carrying
// the id, for each), reporting progress, honouring the gate.
func (f *fakeBackend) remove(ctx context.Context, kind replay.EventKind, req ActionRequest, keep bool) (replay.Result, error) {
	f.mu.Lock()
	f.lastReq = req
	f.mu.Unlock()
	var res replay.Result
	ids := f.chosen(req)
	total := len(ids)
	for _, id := range ids {
		if f.gate != nil {
			select {
			case <-f.gate:
			case <-ctx.Done():
				return res, ctx.Err()
			}
		}
		f.mu.Lock()
		if why, bad := f.failIDs[id]; bad {
			res.Failed++
			res.Failures = append(res.Failures, replay.Failure{ID: id, Err: why})
		} else {
			if !keep {
				ms := f.messages[req.Queue]
				for i, m := range ms {
					if m.sum.ID == id {
						f.messages[req.Queue] = append(ms[:i:i], ms[i+1:]...)
						break
					}
				}
			}
			res.Done++
		}
		f.mu.Unlock()
		if req.Progress != nil {
			req.Progress(replay.Event{Kind: kind, ID: id, Done: res.Done + res.Failed, Total: total})
		}
	}
	return res, nil
}

func (f *fakeBackend) Replay(ctx context.Context, req ActionRequest) (replay.Result, error) {
	f.record(fmt.Sprintf("replay %s %d rate=%g", req.Queue, len(f.chosen(req)), req.Rate))
	return f.remove(ctx, replay.EventReplayed, req, false)
}

func (f *fakeBackend) Delete(ctx context.Context, req ActionRequest) (replay.Result, error) {
	f.record(fmt.Sprintf("delete %s %d", req.Queue, len(f.chosen(req))))
	return f.remove(ctx, replay.EventDeleted, req, false)
}

func (f *fakeBackend) Export(ctx context.Context, req ActionRequest, path string) (replay.Result, error) {
	f.record(fmt.Sprintf("export %s %d %s", req.Queue, len(f.chosen(req)), path))
	return f.remove(ctx, replay.EventExported, req, true)
}

// Import adds one message a non-empty line of the file to req.Queue, as
// replay.Session.Import publishes each exported message back.
func (f *fakeBackend) Import(ctx context.Context, req ActionRequest, path string) (replay.Result, error) {
	f.record(fmt.Sprintf("import %s %s rate=%g", req.Queue, path, req.Rate))
	data, err := os.ReadFile(path)
	if err != nil {
		return replay.Result{}, err
	}
	var lines []string
	for _, l := range strings.Split(string(data), "\n") {
		if strings.TrimSpace(l) != "" {
			lines = append(lines, l)
		}
	}
	var res replay.Result
	for i := range lines {
		if f.gate != nil {
			select {
			case <-f.gate:
			case <-ctx.Done():
				return res, ctx.Err()
			}
		}
		id := fmt.Sprintf("imported-%d", i+1)
		if f.importID != "" {
			id = fmt.Sprintf("%s-%d", f.importID, i+1)
		}
		f.add(req.Queue, id, "imported", time.Minute, `{}`)
		res.Done++
		if req.Progress != nil {
			req.Progress(replay.Event{Kind: replay.EventImported, ID: id, Done: res.Done, Total: len(lines)})
		}
	}
	return res, nil
}

func (f *fakeBackend) PrepareEdit(_ context.Context, queue, id string) (*EditDraft, error) {
	f.record("prepare-edit " + id)
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, m := range f.messages[queue] {
		if m.sum.ID == id {
			p := filepath.Join(f.dir, "draft-"+strings.NewReplacer(":", "_", "/", "_").Replace(id)+".json")
			if err := os.WriteFile(p, m.msg.Body, 0o600); err != nil {
				return nil, err
			}
			return &EditDraft{Queue: queue, ID: id, Path: p, ContentType: m.msg.Properties.ContentType}, nil
		}
	}
	return nil, errors.New("no such message")
}

func (f *fakeBackend) FinishEdit(ctx context.Context, d *EditDraft, req ActionRequest) (replay.Result, error) {
	f.record("finish-edit " + d.ID)
	body, err := os.ReadFile(d.Path)
	if err != nil {
		return replay.Result{}, err
	}
	if !json.Valid(body) {
		return replay.Result{}, fmt.Errorf("%w: the edited body is not valid JSON; nothing was sent", replay.ErrInvalidBody)
	}
	req.Select = replay.Selector{IDs: []string{d.ID}}
	res, err := f.remove(ctx, replay.EventReplayed, req, false)
	_ = os.Remove(d.Path)
	return res, err
}

func (f *fakeBackend) DiscardEdit(d *EditDraft) {
	f.record("discard-edit " + d.ID)
	_ = os.Remove(d.Path)
}

// ids lists the ids left in queue, sorted.
func (f *fakeBackend) ids(queue string) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, m := range f.messages[queue] {
		out = append(out, m.sum.ID)
	}
	sort.Strings(out)
	return out
}

// seedDemo fills a parking lot the way the demo does, with fixed ids.
func seedDemo(f *fakeBackend) {
	f.queues = []QueueRow{
		{QueueInfo: broker.QueueInfo{Name: "demo.error.dlq", Type: "classic"}, ParkingLot: true},
		{QueueInfo: broker.QueueInfo{Name: "demo.main.queue", Type: "classic", Consumers: 1}},
		{QueueInfo: broker.QueueInfo{Name: "demo.retry.1s", Type: "classic"}},
		{QueueInfo: broker.QueueInfo{Name: "demo.retry.3s", Type: "classic"}},
	}
	q := "demo.error.dlq"
	f.add(q, "pay-0001", "invalid JSON: unexpected end of input at offset 17", 9*time.Minute, `{"id":"pay-0001","amount":`)
	f.add(q, "pay-0002", "amount must be positive, got -250 (payment pay-0002)", 8*time.Minute, `{"id":"pay-0002","amount":-250,"currency":"EUR"}`)
	f.add(q, "pay-0003", "amount must be positive, got -13 (payment pay-0003)", 7*time.Minute, `{"id":"pay-0003","amount":-13,"currency":"EUR"}`)
	f.add(q, "pay-0004", "bank gateway timeout after 3000 ms (attempt 4)", 6*time.Minute, `{"id":"pay-0004","amount":120,"currency":"EUR"}`)
	f.add(q, "pay-0005", `field "amount": want number, got string "12,50"`, 5*time.Minute, `{"id":"pay-0005","amount":"12,50","currency":"EUR"}`)
	f.add(q, "pay-0006", "bank gateway timeout after 3000 ms (attempt 4)", 4*time.Minute, `{"id":"pay-0006","amount":99,"currency":"USD"}`)
	f.add(q, "pay-0007", "amount must be positive, got -1 (payment pay-0007)", 3*time.Minute, `{"id":"pay-0007","amount":-1,"currency":"GBP"}`)
}
