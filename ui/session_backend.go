package ui

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/parkinglot/parkinglot/replay"
	"github.com/parkinglot/parkinglot/replay/watch"
	"github.com/parkinglot/parkinglot/retrycore"
	"github.com/parkinglot/parkinglot/ui/format"
)

// sessionBackend adapts *replay.Session to Backend: the only code that
// calls replay's operations.
type sessionBackend struct{ s *replay.Session }

// NewSessionBackend is the real Backend.
func NewSessionBackend(s *replay.Session) Backend { return sessionBackend{s} }

func (b sessionBackend) Describe() string { return b.s.Describe() }

func (b sessionBackend) Cluster(ctx context.Context) (Cluster, error) {
	nodes, err := b.s.Nodes(ctx)
	conn, cerr := b.s.ConnectionNode(ctx)
	if err == nil {
		err = cerr
	}
	return Cluster{Conn: conn, Nodes: nodes}, err
}

func (b sessionBackend) Queues(ctx context.Context) ([]QueueRow, error) {
	rows, err := b.s.Queues(ctx)
	out := make([]QueueRow, len(rows))
	for i, r := range rows {
		out[i] = QueueRow(r)
	}
	return out, err
}

func (b sessionBackend) ParkingLotDefaults(queue string) replay.ParkingLot {
	return b.s.Config().ParkingLots[queue]
}

func (b sessionBackend) ParkingLots(ctx context.Context, scan bool, busy []string) (Lots, error) {
	top := -1 // no scans
	if scan {
		top = 1
	}
	snaps := watch.Once(ctx, watch.Options{TopGroups: top, HandsOff: func(q string) bool { return slices.Contains(busy, q) },
		Open: func(context.Context, string) (*replay.Session, error) { return b.s, nil }}, scan)
	return Lots{Snapshots: snaps, LastHour: watch.ArrivalsLastHour(ctx, b.s, snaps, time.Now())}, ctx.Err()
}

func (b sessionBackend) Browse(ctx context.Context, req BrowseRequest) (BrowseResult, error) {
	br, err := b.s.Browse(ctx, replay.BrowseOptions{Queue: req.Queue, Limit: req.Limit, Filter: req.Filter, Spool: true, OnBatch: req.OnBatch, StreamOnly: true})
	var res BrowseResult
	if br != nil {
		res.Facts, res.Report = br.Facts, br.Report
		if br.Spool != nil { // a nil *Spool in the interface would not be nil
			res.Messages = br.Spool
		}
	}
	return res, err
}

func (b sessionBackend) Search(ctx context.Context, req SearchRequest) (replay.SearchResult, error) {
	res, err := b.s.Search(ctx, replay.SearchOptions{Queues: req.Queues, Query: req.Query, Keep: req.Keep, OnQueue: req.OnQueue, OnMatch: req.OnMatch, Skip: req.Skip})
	if res == nil {
		return replay.SearchResult{}, err
	}
	return *res, err
}

func (b sessionBackend) Tail(ctx context.Context, queue string, onReady func(), onArrival func(replay.Summary), onGap func(replay.TailGap)) error {
	var untapped error
	_, err := b.s.Tail(ctx, replay.TailOptions{Queues: []string{queue},
		OnTapped: func(setup replay.TailSetup) {
			if len(setup.Untapped) > 0 {
				untapped = setup.Untapped[0].Err
				return
			}
			onReady()
		},
		OnArrival:  func(a replay.TailArrival) { onArrival(a.Summary) },
		OnRetapped: onGap})
	if untapped != nil {
		return untapped
	}
	return err
}

func (b sessionBackend) options(req ActionRequest) replay.Options {
	return replay.Options{Queue: req.Queue, Select: req.Select, To: req.To, Target: req.Target, Rate: req.Rate, Limit: req.Limit, Progress: req.Progress}
}

func (b sessionBackend) Plan(ctx context.Context, req ActionRequest) (Plan, error) {
	p, err := b.s.PlanEach(ctx, b.options(req), replay.PlanSink{}) // counts and routes; no item a message
	if err != nil {
		return Plan{}, err
	}
	return planFrom(p), nil
}

// planFrom turns replay's plan into what the dialog shows.
func planFrom(p replay.Plan) Plan {
	out := Plan{Messages: p.Chosen, Unresolved: p.RefusedCount, Resets: p.Resets}
	for _, r := range p.Routes {
		pr := PlannedRoute{
			Destination: r.Destination, Messages: r.Messages, Queues: r.Queues,
			Known: r.Available, FailedQueues: r.FailedQueues, Problem: format.RouteError(r), CC: r.CC, CCQueues: r.CCQueues,
			Source: mostCommon(r.Sources),
		}
		out.Routes = append(out.Routes, pr)
	}
	if len(p.Refused) > 0 {
		out.Warnings = append(out.Warnings, fmt.Sprintf("%d message(s) would not be sent: %s", p.RefusedCount, p.Refused[0].Err))
	}
	if p.MissingCount > 0 {
		out.Warnings = append(out.Warnings, fmt.Sprintf("%d message(s) are no longer in the queue", p.MissingCount))
	}
	out.Warnings = append(out.Warnings, format.Notes(p.Notes)...)
	return out
}

func mostCommon(counts map[string]int) string {
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if counts[keys[i]] != counts[keys[j]] {
			return counts[keys[i]] > counts[keys[j]]
		}
		return keys[i] < keys[j]
	})
	if len(keys) == 0 {
		return ""
	}
	if len(keys) > 1 {
		return keys[0] + fmt.Sprintf(" (and %d other rules)", len(keys)-1)
	}
	return keys[0]
}

func (b sessionBackend) Replay(ctx context.Context, req ActionRequest) (replay.Result, error) {
	if len(req.Canary) == 0 {
		return b.s.Replay(ctx, b.options(req))
	}
	co := replay.CanaryOptions{Options: b.options(req), Steps: req.Canary, Wait: req.CanaryWait, Proceed: req.Proceed}
	if req.OnCanary != nil {
		co.OnWait = func(left time.Duration, st replay.CanaryStep) { req.OnCanary(CanaryUpdate{Step: st, Left: left}) }
		co.OnStep = func(st replay.CanaryStep) { req.OnCanary(CanaryUpdate{Step: st, Ended: true}) }
	}
	res, _, err := b.s.Canary(ctx, co)
	return res, err
}

func (b sessionBackend) Delete(ctx context.Context, req ActionRequest) (replay.Result, error) {
	return b.s.Delete(ctx, replay.DeleteOptions{Queue: req.Queue, Select: req.Select, Limit: req.Limit, Progress: req.Progress})
}

func (b sessionBackend) Export(ctx context.Context, req ActionRequest, path string) (replay.Result, error) {
	return b.s.Export(ctx, replay.ExportOptions{Queue: req.Queue, Select: req.Select, File: path, Limit: req.Limit, Progress: req.Progress})
}

func (b sessionBackend) Import(ctx context.Context, req ActionRequest, path string) (replay.Result, error) {
	return b.s.Import(ctx, replay.ImportOptions{File: path, To: &retrycore.Destination{RoutingKey: req.Queue},
		Rate: req.Rate, Progress: req.Progress})
}

func (b sessionBackend) PrepareEdit(ctx context.Context, queue, id string) (*EditDraft, error) {
	d, err := b.s.PrepareEdit(ctx, queue, id)
	if err != nil {
		return nil, err
	}
	return &EditDraft{Queue: d.Queue, ID: d.ID, Path: d.Path, ContentType: d.ContentType, Opaque: d}, nil
}

// FinishEdit checks the body first: replay.FinishEdit removes the draft
// in every case, and an invalid edit should stay for another try.
func (b sessionBackend) FinishEdit(ctx context.Context, d *EditDraft, req ActionRequest) (replay.Result, error) {
	rd, ok := d.Opaque.(*replay.EditDraft)
	if !ok {
		return replay.Result{}, errors.New("edit: draft from another backend")
	}
	if _, err := rd.Check(); err != nil {
		return replay.Result{}, err
	}
	return b.s.FinishEdit(ctx, rd, b.options(req))
}

func (b sessionBackend) DiscardEdit(d *EditDraft) {
	if rd, ok := d.Opaque.(*replay.EditDraft); ok {
		_ = rd.Discard()
	}
}
