package replay

import (
	"context"
	"fmt"
	"time"

	"github.com/parkinglot/parkinglot/broker"
)

// DeleteOptions say which messages to remove from a parking lot.
type DeleteOptions struct {
	Queue  string
	Select Selector
	// Limit, when > 0, is how many messages are removed at most: the count
	// a person confirmed (new ones arrive at the back).
	Limit    int
	Progress func(Event)
}

// commitEvery bounds how many removals wait for one audit fsync in the
// commands that do not publish (delete, export --remove).
const commitEvery = 256

// Delete removes the chosen messages. Each removal's audit entry is on disk
// before its ack.
func (s *Session) Delete(ctx context.Context, o DeleteOptions) (Result, error) {
	if o.Queue == "" {
		return Result{}, fmt.Errorf("%w: no queue given", ErrBadSelection)
	}
	sel, err := newSelection(o.Select, true, s.Bodies)
	if err != nil {
		return Result{}, err
	}
	defer sel.close()
	audit, err := s.openAudit()
	if err != nil {
		return Result{}, err
	}
	defer audit.Close()
	p, err := s.openPass(ctx, o.Queue, 0)
	if err != nil {
		return Result{}, err
	}
	t := newTally(o.Progress)
	rm := &remover{audit: audit, tally: t, kind: EventDeleted, entry: AuditEntry{Action: "delete", Queue: o.Queue}}
	err = s.deletePass(ctx, p, o.Queue, sel, rm, o.Limit)
	if ferr := rm.flush(); err == nil {
		err = ferr
	}
	err = closePass(ctx, p, t, sel, o.Queue, err)
	return t.finish(), err
}

func (s *Session) deletePass(ctx context.Context, p *broker.Pass, queue string, sel *selection, rm *remover, limit int) error {
	w := walk{queue: queue, sel: sel, q: s.originQuery(ctx, queue, nil), skip: func(id string, err error) { rm.tally.skipped(id, err.Error()) }}
	n := 0
	for c, err := range w.chosen(ctx, p) {
		if err != nil {
			return err
		}
		if sel.reached(n, limit) { // one more than the limit: the rest is given back
			return nil
		}
		n++
		rm.tally.chosen(c.id)
		if err := rm.add(c.held, c.id); err != nil {
			return err
		}
	}
	return nil
}

// remover removes held messages in batches: audit entries written and
// fsynced, then the acks. before, when set, runs first (export fsyncs its
// file there).
type remover struct {
	audit  *auditLog
	tally  *tally
	kind   EventKind
	entry  AuditEntry
	before func() error
	held   []*broker.Held
	ids    []string
}

func (rm *remover) add(h *broker.Held, id string) error {
	rm.held = append(rm.held, h)
	rm.ids = append(rm.ids, id)
	if len(rm.held) >= commitEvery {
		return rm.flush()
	}
	return nil
}

func (rm *remover) flush() error {
	if len(rm.held) == 0 {
		return nil
	}
	held, ids := rm.held, rm.ids
	rm.held, rm.ids = nil, nil
	fail := func(err error) error {
		for _, id := range ids {
			rm.tally.failed(id, fmt.Errorf("not removed: %w", err), nil, "")
		}
		return err
	}
	if rm.before != nil {
		if err := rm.before(); err != nil {
			return fail(err)
		}
	}
	now := time.Now().UTC()
	entries := make([]AuditEntry, len(ids))
	for i, id := range ids {
		e := rm.entry
		e.Time, e.MessageID, e.Result = now, id, resultOK
		entries[i] = e
	}
	if err := rm.audit.commit(entries); err != nil {
		return fail(err)
	}
	var notRemoved []AuditEntry
	for i, err := range broker.AckAll(held) {
		if err != nil {
			e := entries[i]
			e.Result, e.Error = resultNotRemoved, err.Error()
			notRemoved = append(notRemoved, e)
			rm.tally.failed(ids[i], fmt.Errorf("not removed: %w", err), nil, "")
			continue
		}
		rm.tally.done(rm.kind, ids[i], nil, "", nil)
	}
	return rm.audit.commit(notRemoved)
}
