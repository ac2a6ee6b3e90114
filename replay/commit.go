package replay

import (
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"github.com/parkinglot/parkinglot/broker"
)

// committer turns settled messages into audit entries and removals: it
// writes the entries of every batch that arrived together, fsyncs once
// (group commit), and only then acks the parked copies. It runs on its own
// goroutine so that an fsync never stalls the publish loop.
type committer struct {
	audit *auditLog
	tally *tally
	run   *run
	kind  EventKind // replayed | imported

	in       chan []settled
	released chan struct{} // a batch was committed: the window has room
	open     *atomic.Int64 // jobs handed to the publisher, not yet committed
	done     chan struct{}
	failed   atomic.Bool // the audit log could not be written: stop
	// entries: the last batch's audit entries, their room used again.
	entries []AuditEntry
}

func newCommitter(r *run, kind EventKind, open *atomic.Int64) *committer {
	c := &committer{
		audit: r.audit, tally: r.tally, run: r, kind: kind,
		in:       make(chan []settled, 64),
		released: make(chan struct{}, 1),
		open:     open,
		done:     make(chan struct{}),
	}
	go c.loop()
	return c
}

// submit hands a batch over; it blocks while the committer is behind,
// which is the back-pressure the window wants.
func (c *committer) submit(batch []settled) {
	if len(batch) > 0 {
		c.in <- batch
	}
}

// finish waits until everything submitted is committed.
func (c *committer) finish() {
	close(c.in)
	<-c.done
}

func (c *committer) loop() {
	defer close(c.done)
	for batch := range c.in {
	coalesce:
		for {
			select {
			case more, ok := <-c.in:
				if !ok {
					break coalesce
				}
				batch = append(batch, more...)
			default:
				break coalesce
			}
		}
		c.commit(batch)
		c.open.Add(-int64(len(batch)))
		select {
		case c.released <- struct{}{}:
		default:
		}
	}
}

// entriesOf is the audit entries of a batch, one a message, stamped now,
// in entries' room.
func (r *run) entriesOf(entries []AuditEntry, batch []settled) []AuditEntry {
	now := time.Now().UTC()
	entries = slices.Grow(entries[:0], len(batch))[:len(batch)]
	for i, s := range batch {
		j := s.job
		e := *j.entry
		e.To = &j.dest
		e.MessageID, e.ReplayID, e.Run = j.id, j.replayID, r.runID
		if j.auditID != "" {
			e.MessageID = j.auditID
		}
		e.Time = now
		e.Result = resultOK
		if s.err != nil {
			e.Result, e.Error = resultOf(s.err), s.err.Error()
		}
		entries[i] = e
	}
	return entries
}

func (c *committer) commit(batch []settled) {
	entries := c.run.entriesOf(c.entries, batch)
	c.entries = entries
	defer clear(entries) // they point into the batch's jobs: keep none alive
	if c.failed.Load() {
		c.notRemoved(batch, errors.New("audit log not writable"))
		return
	}
	if err := c.audit.commit(entries); err != nil {
		c.failed.Store(true)
		c.run.halt(err)
		c.notRemoved(batch, err)
		return
	}
	ackErrs := ackBatch(batch)
	var ackFailed []AuditEntry
	for i, s := range batch {
		j := s.job
		if s.err != nil {
			c.run.failedFor(j, s.err)
			continue
		}
		if err := ackErrs[i]; err != nil {
			e := entries[i]
			e.Result, e.Error = resultNotRemoved, err.Error()
			ackFailed = append(ackFailed, e)
			c.run.notRemoved(j, err)
			continue
		}
		if c.run.doneFor(j) {
			c.tally.done(c.kind, j.id, &j.dest, j.replayID, j.resets)
		}
	}
	if len(ackFailed) > 0 {
		if err := c.audit.commit(ackFailed); err != nil {
			c.tally.note(Note{Kind: NoteError, Err: err})
		}
	}
}

// notRemoved reports a batch whose audit entries could not be written:
// copies that were sent stay parked as well (a duplicate, never a loss).
func (c *committer) notRemoved(batch []settled, why error) {
	for _, s := range batch {
		if s.err == nil && s.job.held == nil {
			// An import's copy, confirmed: published, and nothing is
			// parked to remove; only its audit entry is missing (the run
			// stops with the audit log's error).
			if c.run.doneFor(s.job) {
				c.tally.done(c.kind, s.job.id, &s.job.dest, s.job.replayID, s.job.resets)
			}
			continue
		}
		err := s.err
		if err == nil {
			err = fmt.Errorf("sent (replay id %s) but left parked: %w", s.job.replayID, why)
		}
		c.run.failedFor(s.job, err)
	}
}

func resultOf(err error) string {
	switch {
	case errors.Is(err, ErrUnroutable):
		return resultUnroutable
	case errors.Is(err, broker.ErrNacked):
		return resultNacked
	}
	return resultFailed
}

// ackBatch removes the parked copies of the confirmed messages of a batch
// (their audit entries are on disk), returning an error per message.
// broker.AckAll coalesces the contiguous prefix into one multiple ack.
func ackBatch(batch []settled) []error {
	errs := make([]error, len(batch))
	var held []*broker.Held
	var at []int
	for i, s := range batch {
		if s.err == nil && s.job.held != nil {
			held = append(held, s.job.held)
			at = append(at, i)
		}
	}
	for k, err := range broker.AckAll(held) {
		errs[at[k]] = err
	}
	return errs
}
