package replay

import "errors"

// Errors the CLI maps to exit statuses.
var (
	// ErrNotAllDone: some messages were not replayed/removed (exit 3); each is
	// reported on its own line.
	ErrNotAllDone = errors.New("some messages were not done")
	// ErrNeedsConfirmation: a command that removes or sends messages ran
	// without a terminal and without --yes; it printed the plan and changed
	// nothing (exit 2).
	ErrNeedsConfirmation = errors.New("nothing changed: pass --yes to do this without a terminal")
	// ErrUnroutable: the broker returned the copy (no queue bound); the
	// message stays parked.
	ErrUnroutable = errors.New("unroutable: no queue is bound for that exchange and routing key")
	// ErrNacked: the broker refused the copy (for example a full queue with
	// x-overflow reject-publish); the message stays parked.
	ErrNacked = errors.New("the broker refused the copy (nack)")
)
