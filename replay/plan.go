package replay

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sort"
	"strings"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/retrycore"
)

// Plan is what Replay would do, found by a non-destructive pass: where each
// chosen message would go and why, which queues each destination reaches,
// and which messages cannot be replayed.
type Plan struct {
	Queue string `json:"queue"`
	// Items are the messages the replay would send, each with where it
	// would go; PlanEach hands them out instead of keeping them.
	Items []PlanItem `json:"items"`
	// Chosen is how many they are (whether kept or handed out).
	Chosen int `json:"-"`
	// Refused are chosen messages that would not be sent (unknown origin,
	// unknown failed queue with TargetQueue), with the reason: every one
	// from Plan, the first MaxListedFailures from PlanEach (none when a
	// PlanSink.Refused takes them). RefusedCount is how many they are.
	Refused      []Failure `json:"refused,omitempty"`
	RefusedCount int       `json:"-"`
	// Missing are requested ids that are not in the queue: every one from
	// Plan (sorted), MaxListedFailures of them from PlanEach, in the
	// selection's order (none when a PlanSink.Missing takes them).
	// MissingCount is how many they are.
	Missing      []string `json:"missing,omitempty"`
	MissingCount int      `json:"-"`
	// Routes has one preview per destination, most messages first.
	Routes []RoutePreview `json:"routes"`
	// Skipped counts messages a filter could not be evaluated on.
	Skipped int `json:"skipped,omitempty"`
	// Resets counts, per retry counter, the messages whose copy would have
	// it reset (Transform).
	Resets map[string]int    `json:"resets,omitempty"`
	Notes  []Note            `json:"-"` // ui/cli puts them, worded, in -o json
	Facts  broker.QueueFacts `json:"-"`
	Report broker.PassReport `json:"pass"`
}

// Unroutable is how many of the plan's messages go to a destination the
// route preview found unroutable (no queue bound, or no such exchange): the
// broker would return their copies and they would stay parked. Routes the
// preview could not check (no management API) are not counted.
func (p Plan) Unroutable() int {
	n := 0
	for _, rp := range p.Routes {
		if rp.Unroutable {
			n += rp.Messages
		}
	}
	return n
}

// Err predicts the replay's outcome: an error wrapping ErrNotAllDone (the
// exit status of a run that leaves messages parked) when a chosen message
// would be refused or unroutable, or a requested id is not in the queue;
// nil when every one would be sent.
func (p Plan) Err() error {
	e := &wouldStayParked{refused: p.RefusedCount, missing: p.MissingCount, unroutable: p.Unroutable()}
	if e.refused+e.missing+e.unroutable == 0 {
		return nil
	}
	return e
}

type wouldStayParked struct{ refused, missing, unroutable int }

func (e *wouldStayParked) Error() string {
	var why []string
	for _, c := range []struct {
		n    int
		what string
	}{{e.refused, "refused"}, {e.unroutable, "unroutable"}, {e.missing, "not in the queue"}} {
		if c.n > 0 {
			why = append(why, fmt.Sprintf("%d %s", c.n, c.what))
		}
	}
	return fmt.Sprintf("a replay would not send %d message(s): %s", e.refused+e.missing+e.unroutable, strings.Join(why, ", "))
}

func (e *wouldStayParked) Unwrap() error { return ErrNotAllDone }

// PlanItem is one message and where it would go.
type PlanItem struct {
	ID          string                `json:"id"`
	Destination retrycore.Destination `json:"destination"`
	// Source says which rule gave the origin (retrycore.Origin.Source).
	Source string `json:"source"`
	// FailedQueue is the queue the message failed in, when known.
	FailedQueue string `json:"failed_queue,omitempty"`
	Error       string `json:"error,omitempty"` // the parked message's error, for display
	// Resets are the retry counters the copy would reset (Transform).
	Resets []string `json:"resets,omitempty"`
	// CC lists the routing keys of the CC and BCC headers the copy keeps:
	// the broker routes it with each of them too.
	CC []string `json:"cc,omitempty"`
}

// SourceTargetQueue is the Source of a PlanItem that TargetQueue sends
// to the queue it failed in (through the default exchange).
const SourceTargetQueue = "the queue it failed in"

// RoutePreview says which queues a destination reaches (management API
// bindings). It is data: ui/format words it (RouteLine, WordRoute).
type RoutePreview struct {
	Destination retrycore.Destination `json:"destination"`
	Messages    int                   `json:"messages"`
	// Available is false when the management API gave no preview;
	// Unavailable says why.
	Available  bool     `json:"available"`
	Queues     []string `json:"queues,omitempty"`
	Unroutable bool     `json:"unroutable,omitempty"`
	// NoExchange: the destination's exchange does not exist in Vhost
	// (Unroutable too).
	NoExchange bool   `json:"-"`
	Vhost      string `json:"-"`
	// FailedQueues are the queues the messages failed in, when known.
	FailedQueues []string `json:"failed_queues,omitempty"`
	// CC are the CC and BCC routing keys the messages carry (one preview
	// per destination and CC keys); CCQueues the queues only those reach.
	CC       []string `json:"cc,omitempty"`
	CCQueues []string `json:"cc_queues,omitempty"`
	// Sources counts the messages by the rule that gave their origin
	// (PlanItem.Source).
	Sources map[string]int `json:"-"`
	// Warning and Err are the preview in words for -o json; the engine
	// leaves them empty and ui/format.WordRoute fills them in.
	Warning string `json:"warning,omitempty"`
	Err     string `json:"error,omitempty"`
	// Unavailable is why the management API gave no preview.
	Unavailable error `json:"-"`
}

// Warns: a person should be told of this route before sending: it is
// unroutable, reaches other queues than the ones that failed (or several
// when those are not known), or reaches queues through CC/BCC.
func (r RoutePreview) Warns() bool {
	if !r.Available {
		return false
	}
	return r.Unroutable || len(r.CCQueues) > 0 || len(r.OtherQueues()) > 0 ||
		(len(r.FailedQueues) == 0 && len(r.Queues) > 1)
}

// OtherQueues are the queues the destination reaches besides the ones the
// messages failed in, when those are known: their consumers would get the
// messages again (TargetQueue sends to the failed queues alone).
func (r RoutePreview) OtherQueues() []string {
	if len(r.FailedQueues) == 0 {
		return nil
	}
	return others(r.Queues, r.FailedQueues)
}

// Plan works out what Replay would do with the same options; it changes
// nothing (the pass gives every message back). Plan.Items holds every
// chosen message: for a parking lot of any size, PlanEach.
func (s *Session) Plan(ctx context.Context, o Options) (Plan, error) {
	var items []PlanItem
	var refused []Failure
	var missing []string
	p, err := s.PlanEach(ctx, o, PlanSink{
		Item:    func(it PlanItem) error { items = append(items, it); return nil },
		Refused: func(f Failure) error { refused = append(refused, f); return nil },
		Missing: func(id string) error { missing = append(missing, id); return nil },
	})
	sort.Strings(missing)
	p.Items, p.Refused, p.Missing = items, refused, missing
	return p, err
}

// PlanSink takes a plan's messages as the pass finds them, so that a plan
// of a parking lot of any size holds none of them.
type PlanSink struct {
	// Item takes each message the replay would send (nil: only counted).
	Item func(PlanItem) error
	// Refused takes each chosen message that would not be sent (nil: the
	// first MaxListedFailures are kept in Plan.Refused, the rest counted).
	Refused func(Failure) error
	// Missing takes each requested id the pass did not find (nil: the
	// first MaxListedFailures are kept in Plan.Missing, the rest counted).
	Missing func(id string) error
}

// handOrKeep gives v to a PlanSink's take, or, when it has none, keeps v
// in kept while it holds fewer than MaxListedFailures.
func handOrKeep[T any](take func(T) error, kept *[]T, v T) error {
	if take != nil {
		return take(v)
	}
	if len(*kept) < MaxListedFailures {
		*kept = append(*kept, v)
	}
	return nil
}

// PlanEach is Plan that hands each chosen message to the sink as the pass
// finds it and keeps none: Plan.Items is empty, and the counts, routes and
// resets are those of every message. An error from the sink ends the pass
// and is returned.
func (s *Session) PlanEach(ctx context.Context, o Options, sink PlanSink) (Plan, error) {
	if err := o.check(); err != nil {
		return Plan{}, err
	}
	sel, err := newSelection(o.Select, true, s.Bodies)
	if err != nil {
		return Plan{}, err
	}
	defer sel.close()
	p, err := s.openPass(ctx, o.Queue, 0)
	if err != nil {
		return Plan{}, err
	}
	plan := Plan{Queue: o.Queue, Facts: p.Facts()}
	q := s.originQuery(ctx, o.Queue, o.To)
	routes := &routeAcc{}
	err = planPass(ctx, p, o, sel, q, &plan, routes, sink)
	rep, cerr := p.Close(context.WithoutCancel(ctx))
	plan.Report = rep
	plan.Notes = append(plan.Notes, passNotes(rep.Notes)...)
	if err == nil {
		err = cerr
	}
	if err != nil {
		return plan, err
	}
	for id, err := range sel.missing {
		if err != nil {
			return plan, err
		}
		plan.MissingCount++
		if err := handOrKeep(sink.Missing, &plan.Missing, id); err != nil {
			return plan, err
		}
	}
	plan.Routes = s.previewRoutes(ctx, routes)
	return plan, nil
}

func planPass(ctx context.Context, p *broker.Pass, o Options, sel *selection, q retrycore.OriginQuery, plan *Plan, routes *routeAcc, sink PlanSink) error {
	w := walk{queue: o.Queue, sel: sel, q: q, skip: func(_ string, err error) {
		plan.Skipped++
		if plan.Skipped == 1 {
			plan.Notes = append(plan.Notes, Note{Kind: NoteError, Err: err})
		}
	}}
	for c, err := range w.chosen(ctx, p) {
		if err != nil {
			return err
		}
		id, sum := c.id, c.sum
		dest, err := destinationFor(sum, o.Target)
		if err != nil {
			f := Failure{ID: id, Err: err.Error(), Code: failureCode(err)}
			plan.RefusedCount++
			if err := handOrKeep(sink.Refused, &plan.Refused, f); err != nil {
				return err
			}
			continue
		}
		item := PlanItem{ID: id, Destination: dest, Error: sum.Facts.Error, Resets: Resets(c.held.Headers), CC: broker.CCKeys(c.held.Headers)}
		if o.Target == TargetQueue { // the copy goes without its CC/BCC (replayPrepare)
			item.CC = nil
			item.Resets = append(item.Resets, sendAlone(maps.Clone(c.held.Headers))...)
		}
		for _, r := range item.Resets {
			if plan.Resets == nil {
				plan.Resets = map[string]int{}
			}
			plan.Resets[r]++
		}
		if sum.Origin != nil {
			item.Source, item.FailedQueue = sum.Origin.Source, sum.Origin.Queue
			if o.Target == TargetQueue {
				item.Source = SourceTargetQueue
			}
		}
		plan.Chosen++
		routes.add(item)
		if sink.Item != nil {
			if err := sink.Item(item); err != nil {
				return err
			}
		}
	}
	return nil
}

// routeKey is one route preview: a destination and the CC/BCC keys the
// messages going there carry.
type routeKey struct {
	dest retrycore.Destination
	cc   string
}

func routeKeyOf(d retrycore.Destination, cc []string) routeKey {
	return routeKey{d, strings.Join(cc, "\x00")}
}

// routeAcc gathers the routes of a plan's items as the pass finds them:
// one a destination and CC/BCC keys, however many messages go there.
type routeAcc struct {
	byKey  map[routeKey]*RoutePreview
	failed map[routeKey]map[string]bool
	order  []routeKey
}

func (a *routeAcc) add(it PlanItem) {
	if a.byKey == nil {
		a.byKey, a.failed = map[routeKey]*RoutePreview{}, map[routeKey]map[string]bool{}
	}
	k := routeKeyOf(it.Destination, it.CC)
	rp := a.byKey[k]
	if rp == nil {
		rp = &RoutePreview{Destination: it.Destination, CC: it.CC, Sources: map[string]int{}}
		a.byKey[k] = rp
		a.failed[k] = map[string]bool{}
		a.order = append(a.order, k)
	}
	rp.Messages++
	rp.Sources[it.Source]++
	if it.FailedQueue != "" {
		a.failed[k][it.FailedQueue] = true
	}
}

// previewRoutes previews each destination (with its CC/BCC keys) once.
func (s *Session) previewRoutes(ctx context.Context, a *routeAcc) []RoutePreview {
	m, merr := s.Management(ctx)
	out := make([]RoutePreview, 0, len(a.order))
	for _, k := range a.order {
		rp := a.byKey[k]
		for q := range a.failed[k] {
			rp.FailedQueues = append(rp.FailedQueues, q)
		}
		sort.Strings(rp.FailedQueues)
		s.preview(ctx, m, merr, rp)
		out = append(out, *rp)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Messages > out[j].Messages })
	return out
}

// preview fills in rp from the management API m (or says why there is
// none: merr).
func (s *Session) preview(ctx context.Context, m *broker.Management, merr error, rp *RoutePreview) {
	if merr != nil {
		rp.Unavailable = merr
		return
	}
	previewOne(ctx, m, rp, s.vhost())
}

func previewOne(ctx context.Context, m *broker.Management, rp *RoutePreview, vhost string) {
	d := rp.Destination
	var headers amqp.Table
	if len(rp.CC) > 0 { // the broker routes with these keys too
		keys := make([]any, len(rp.CC))
		for i, k := range rp.CC {
			keys[i] = k
		}
		headers = amqp.Table{"CC": keys}
	}
	route, err := m.PreviewRoute(ctx, d.Exchange, d.RoutingKey, headers)
	if err != nil {
		if errors.Is(err, broker.ErrNotFound) && d.Exchange != "" {
			rp.Available, rp.Unroutable, rp.NoExchange, rp.Vhost = true, true, true, vhost
			return
		}
		rp.Unavailable = err
		return
	}
	rp.Available = true
	rp.Queues, rp.CCQueues = route.Queues, route.CCQueues
	rp.Unroutable = route.Unroutable()
}

func others(all, mine []string) []string {
	var out []string
	for _, q := range all {
		found := false
		for _, m := range mine {
			if q == m {
				found = true
			}
		}
		if !found {
			out = append(out, q)
		}
	}
	return out
}

// dryRun is Replay with DryRun: the plan, reported as events as the pass
// finds the messages (each with its route's preview line, previewed once
// a route); the routes' warnings follow, when all are known.
func (s *Session) dryRun(ctx context.Context, o Options) (Result, error) {
	t := newTally(o.Progress)
	routes := map[routeKey]*RoutePreview{}
	m, merr := s.Management(ctx)
	plan, err := s.PlanEach(ctx, o, PlanSink{Item: func(it PlanItem) error {
		k := routeKeyOf(it.Destination, it.CC)
		rp, ok := routes[k]
		if !ok {
			rp = &RoutePreview{Destination: it.Destination, CC: it.CC}
			s.preview(ctx, m, merr, rp)
			routes[k] = rp
		}
		t.chosen(it.ID)
		d := it.Destination
		t.dryRun(it.ID, &d, rp, it.Resets)
		return nil
	}, Refused: func(f Failure) error {
		t.chosen(f.ID)
		t.failed(f.ID, errors.New(f.Err), nil, "")
		return nil
	}, Missing: func(id string) error {
		t.failed(id, notInQueue(id, o.Queue), nil, "")
		return nil
	}})
	for _, rp := range plan.Routes {
		if rp.Warns() {
			t.routeNote(rp)
		}
	}
	t.pass(plan.Report)
	t.res.Notes = appendOnce(t.res.Notes, plan.Notes...)
	return t.finish(), err
}
