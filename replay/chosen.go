package replay

import (
	"context"
	"errors"
	"io"
	"iter"
	"time"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/retrycore"
)

// chosen is one held message a selection picked, with its summary.
type chosen struct {
	held *broker.Held
	id   string
	sum  Summary
}

// walk says how a command reads a pass: which queue, which selection, how
// origins resolve, and what to do with messages it passes over.
type walk struct {
	queue string
	sel   *selection
	q     retrycore.OriginQuery
	// skip is told about a message the filter could not be evaluated on.
	skip func(id string, err error)
	// admit, when set, may pass over a message before it is summarised (the
	// replay's loop guard).
	admit func(h *broker.Held, id string) bool
	// stopped, when set, ends the walk early (a run that was told to stop).
	stopped func() bool
}

// chosen yields the messages of the pass the selection picks, until the
// pass ends (a selection by id reads it to the end: several messages may
// share an id) or the walk is stopped; an error from the pass is yielded
// once and ends the walk. Every delete, export, plan and replay reads a
// pass this way.
func (w walk) chosen(ctx context.Context, p *broker.Pass) iter.Seq2[chosen, error] {
	return func(yield func(chosen, error) bool) {
		now := time.Now()
		for w.stopped == nil || !w.stopped() {
			h, err := p.Next(ctx)
			if errors.Is(err, io.EOF) {
				return
			}
			if err != nil {
				yield(chosen{}, err)
				return
			}
			if c, ok := w.choose(ctx, h, now); ok && !yield(c, nil) {
				return
			}
		}
	}
}

// choose summarises a held message and reports whether the walk picks it.
func (w walk) choose(ctx context.Context, h *broker.Held, now time.Time) (chosen, bool) {
	id := h.ID()
	if w.admit != nil && !w.admit(h, id) {
		return chosen{}, false
	}
	sum := summarize(ctx, h.Message, id, w.q)
	ok, err := w.sel.match(h.Message, sum, w.queue, now)
	if err != nil {
		if w.skip != nil {
			w.skip(id, err)
		}
		return chosen{}, false
	}
	return chosen{held: h, id: id, sum: sum}, ok
}
