package replay

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/broker/store"
	"github.com/parkinglot/parkinglot/retrycore"
)

// BrowseOptions say what to list.
type BrowseOptions struct {
	Queue string
	// Limit stops after this many listed messages (0: all).
	Limit int
	// Filter is an expr-lang expression (see FilterEnv); empty lists all.
	Filter string
	// IDs, when set, lists only the messages with these ids (every one of
	// them: several messages may share an id, so the pass reads the queue
	// to the end).
	IDs []string
	// Spool keeps every listed message in a temporary file (Browse.Spool) so
	// show and the TUI can read bodies without holding them in memory.
	Spool bool
	// OnBatch, when set, receives the summaries as they arrive (batches of
	// about 200, or what arrived in the last 50ms), so a UI shows the first
	// page at once. It runs on the Browse goroutine.
	OnBatch func([]Summary)
	// StreamOnly, with OnBatch, leaves Browse.Summaries empty: the caller
	// keeps what OnBatch gave it, and a 100k-message browse holds one copy
	// of the summaries (about 50 MB), not two.
	StreamOnly bool
	// Alone: list only if the queue has no consumers as the pass begins
	// (broker.ErrOthersConsume), for a watch's scan.
	Alone bool
}

// Browse is what one non-destructive pass found. The pass is closed (every
// message given back) when Browse returns.
type Browse struct {
	Summaries []Summary
	// Spool holds the full messages (Summary.Index) when asked for; the
	// caller closes it.
	Spool  *broker.Spool
	Facts  broker.QueueFacts
	Report broker.PassReport
	// Skipped counts messages the filter could not be evaluated on.
	Skipped int
	Notes   []Note
	// Management is why the management API did not answer (nil when it
	// did): the browse went on without it, protecting quorum queues
	// conservatively.
	Management error
}

const (
	batchSize  = 200
	batchEvery = 50 * time.Millisecond
)

// Browse lists a parking lot without removing anything.
func (s *Session) Browse(ctx context.Context, o BrowseOptions) (*Browse, error) {
	sel, err := newSelection(Selector{IDs: o.IDs, Filter: o.Filter}, false, s.Bodies)
	if err != nil {
		return nil, err
	}
	defer sel.close()
	passLimit := 0
	if sel.filter == nil && sel.ids == nil {
		passLimit = o.Limit // without a filter the pass itself can stop early
	}
	p, err := s.openPassWith(ctx, broker.PassOptions{Queue: o.Queue, Limit: passLimit, Alone: o.Alone})
	if err != nil {
		return nil, err
	}
	b := &Browse{Facts: p.Facts()}
	if _, merr := s.Management(ctx); merr != nil {
		b.Management = merr
	}
	if o.Spool {
		if b.Spool, err = broker.NewSpool(""); err != nil {
			_, _ = p.Close(context.WithoutCancel(ctx))
			return nil, err
		}
	}
	err = s.browsePass(ctx, p, o, sel, b)
	rep, cerr := p.Close(context.WithoutCancel(ctx))
	b.Report = rep
	b.Notes = append(b.Notes, passNotes(rep.Notes)...)
	if err == nil {
		err = cerr
	}
	if err != nil {
		if b.Spool != nil {
			_ = b.Spool.Close()
			b.Spool = nil
		}
		return b, err
	}
	return b, nil
}

func (s *Session) browsePass(ctx context.Context, p *broker.Pass, o BrowseOptions, sel *selection, b *Browse) error {
	q := s.originQuery(ctx, o.Queue, nil)
	var in store.Interner[retrycore.Origin]
	now := time.Now()
	var batch []Summary
	listed := 0
	last := time.Now()
	flush := func() {
		if o.OnBatch != nil && len(batch) > 0 {
			o.OnBatch(batch)
			batch = make([]Summary, 0, batchSize) // OnBatch owns the last one
		}
		batch = batch[:0]
		last = time.Now()
	}
	defer flush()
	for {
		if o.Limit > 0 && listed >= o.Limit {
			return nil
		}
		h, err := p.Next(ctx)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		sum := summarize(ctx, h.Message, h.ID(), q)
		ok, err := sel.match(h.Message, sum, o.Queue, now)
		if err != nil {
			b.Skipped++
			if b.Skipped == 1 {
				b.Notes = append(b.Notes, Note{Kind: NoteError, Err: err})
			}
			continue
		}
		if !ok {
			continue
		}
		sum.Group = in.String(retrycore.GroupKey(sum.Facts.Error))
		internSummary(&in, &sum)
		if b.Spool != nil {
			i, err := b.Spool.Append(h.Message)
			if err != nil {
				return err
			}
			sum.Index = i
		}
		listed++
		if !o.StreamOnly || o.OnBatch == nil {
			b.Summaries = append(b.Summaries, sum)
		}
		batch = append(batch, sum)
		if len(batch) >= batchSize || time.Since(last) >= batchEvery {
			flush()
		}
	}
}

// Find browses a parking lot for one message by id (message_id or content
// id) and gives everything back. A missing id is an error wrapping
// broker.ErrNotFound.
func (s *Session) Find(ctx context.Context, queue, id string) (broker.Message, Summary, error) {
	p, err := s.openPass(ctx, queue, 0)
	if err != nil {
		return broker.Message{}, Summary{}, err
	}
	defer func() { _, _ = p.Close(context.WithoutCancel(ctx)) }()
	q := s.originQuery(ctx, queue, nil)
	for seen := 0; ; seen++ {
		h, err := p.Next(ctx)
		if errors.Is(err, io.EOF) {
			return broker.Message{}, Summary{}, &sentinelError{kind: broker.ErrNotFound,
				msg: fmt.Sprintf("no message %q in queue %q (%d messages looked at)", id, queue, seen)}
		}
		if err != nil {
			return broker.Message{}, Summary{}, err
		}
		if h.ID() == id {
			m := h.Message
			sum := summarize(ctx, m, id, q)
			sum.Group = retrycore.GroupKey(sum.Facts.Error)
			return m, sum, nil
		}
	}
}

// internSummary replaces s's repeating values with shared ones
// (store.Interner): one parking lot's exchange, routing key, failure kind,
// death entries and origin repeat; its error texts, ids and times do not.
// Summaries are read, never changed in place, so sharing is safe.
func internSummary(in *store.Interner[retrycore.Origin], s *Summary) {
	str := in.String
	s.Exchange, s.RoutingKey, s.ContentType = str(s.Exchange), str(s.RoutingKey), str(s.ContentType)
	f := &s.Facts
	f.FailureKind, f.ErrorType = str(f.FailureKind), str(f.ErrorType)
	for _, r := range []*retrycore.DeathRef{&f.FirstDeath, &f.LastDeath} {
		r.Queue, r.Reason, r.Exchange = str(r.Queue), str(r.Reason), str(r.Exchange)
	}
	for i := range f.Deaths {
		d := &f.Deaths[i]
		d.Queue, d.Reason, d.Exchange = str(d.Queue), str(d.Reason), str(d.Exchange)
		d.OriginalExpiration = str(d.OriginalExpiration)
		for j, rk := range d.RoutingKeys {
			d.RoutingKeys[j] = str(rk)
		}
	}
	if s.Origin != nil {
		s.Origin = in.Value(s.Origin, func(o *retrycore.Origin) {
			o.Exchange, o.RoutingKey, o.Source, o.Queue = str(o.Exchange), str(o.RoutingKey), str(o.Source), str(o.Queue)
		})
	}
}
