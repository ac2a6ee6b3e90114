package broker

import (
	"time"
)

// NoteKind says what a pass's Note tells; ui/format words it.
type NoteKind int

const (
	// NoteNoManagement: without the management API the queue's type and
	// delivery limit are unknown; quorum messages seen redelivered are
	// refreshed before a give-back.
	NoteNoManagement NoteKind = iota + 1
	// NoteManagementFailed: the management API failed (Err); the type and
	// delivery limit are unknown and quorum messages are protected
	// conservatively.
	NoteManagementFailed
	// NoteQuorumLimit: the quorum queue has delivery limit Limit; messages
	// within one give-back of it are refreshed instead of given back.
	NoteQuorumLimit
	// NoteOrderNotKept: a pass ended early and could not hold the rest of
	// the queue (Err); the Count messages it looked at may now be at the
	// back.
	NoteOrderNotKept
	// NoteGiveBackSlow: the quorum queue did not take back Count
	// given-back messages within Wait; the rest were given back at once.
	NoteGiveBackSlow
	// NoteAcksPending: after Wait the quorum queue had Count ready, not the
	// Expected; some removed messages may come back.
	NoteAcksPending
	// NoteRefreshFailed: refreshing messages failed (Err); they were given
	// back instead.
	NoteRefreshFailed
	// NoteOtherConsumers: the queue had Count consumers besides the pass,
	// when it began or when it found nothing more ready: messages they
	// held were not seen.
	NoteOtherConsumers
	// NoteMadeSafe: Count messages arrived one lost connection from the
	// delivery limit Limit (carrying x-delivery-count up to DeliveryCount)
	// and were made safe: re-published to the tail, confirmed, the held
	// copy acked.
	NoteMadeSafe
	// NoteDelayedRetry: the queue has delayed retry Delayed; the management
	// API counted Count messages held back by it: not seen by the pass,
	// unless it waited Wait (the longest delay, when short) for them.
	// Where it delays a give-back the pass re-published what it held.
	NoteDelayedRetry
)

// Note is something a pass wants the user to know, as data: which fields
// are set depends on Kind.
type Note struct {
	Kind     NoteKind
	Count    int
	Expected int
	Limit    DeliveryLimit
	Wait     time.Duration
	Err      error
	// DeliveryCount: the highest x-delivery-count of NoteMadeSafe's
	// messages; Delayed: NoteDelayedRetry's setting.
	DeliveryCount int64
	Delayed       DelayedRetry
}

// Same reports whether n and o tell the same thing, so that a note
// repeated by every pass of a run is told once.
func (n Note) Same(o Note) bool {
	return n.Kind == o.Kind && n.Count == o.Count && n.Expected == o.Expected && n.Limit == o.Limit &&
		n.Wait == o.Wait && n.DeliveryCount == o.DeliveryCount && n.Delayed == o.Delayed && SameError(n.Err, o.Err)
}

// SameError reports whether two notes' errors tell the same thing. Each
// pass makes its own error value, so they are compared by what they say:
// for telling a repeated note once, never to decide what to do.
func SameError(a, b error) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return a.Error() == b.Error()
}
