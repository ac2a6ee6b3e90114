package replay

import "github.com/parkinglot/parkinglot/broker"

// NoteKind says what a Note tells; ui/format words it.
type NoteKind int

const (
	// NotePass is a browse pass's note (Pass).
	NotePass NoteKind = iota + 1
	// NoteError is an error the run carried on past (Err): an audit log
	// that could not be written, a filter that could not be evaluated,
	// a management API that did not answer.
	NoteError
	// NoteDelayNotFollowed: the management API did not answer (Err), so
	// origins through delay queues are not followed.
	NoteDelayNotFollowed
	// NoteReconnect: a pass failed (Err); the run reconnects and carries on.
	NoteReconnect
	// NoteResentUnconfirmed: message ID, already done in an earlier pass,
	// was re-sent after a lost connection and not confirmed (Err); it is
	// parked.
	NoteResentUnconfirmed
	// NoteUserIDLeftOut: an imported message's user_id UserID was left out,
	// the broker accepting only the connection's own user ConnUser.
	NoteUserIDLeftOut
)

// Note is something the user should know of a run, a plan or a browse, as
// data: which fields are set depends on Kind.
type Note struct {
	Kind     NoteKind
	Pass     broker.Note
	ID       string
	UserID   string
	ConnUser string
	Err      error
}

// passNotes wraps a pass's notes.
func passNotes(ns []broker.Note) []Note {
	out := make([]Note, 0, len(ns))
	for _, n := range ns {
		out = append(out, Note{Kind: NotePass, Pass: n})
	}
	return out
}

// Same reports whether n and o tell the same thing, so that a note
// repeated by every pass of a run is told once.
func (n Note) Same(o Note) bool {
	return n.Kind == o.Kind && n.ID == o.ID && n.UserID == o.UserID && n.ConnUser == o.ConnUser &&
		n.Pass.Same(o.Pass) && broker.SameError(n.Err, o.Err)
}

// appendOnce appends the notes of add not already in list.
func appendOnce[N interface{ Same(N) bool }](list []N, add ...N) []N {
next:
	for _, a := range add {
		for _, x := range list {
			if x.Same(a) {
				continue next
			}
		}
		list = append(list, a)
	}
	return list
}
