package replay

import (
	"errors"
)

// Errors the CLI maps to exit statuses and the TUI to its messages. They
// say what is wrong; the CLI adds the flag that mends it, the TUI its key.
// ErrNotAllDone ends a run that did some messages and not others.
var (
	// ErrNotAllDone: some messages were not replayed or removed; each is
	// reported on its own.
	ErrNotAllDone = errors.New("some messages were not done")
	// ErrUnroutable: the broker returned the copy (no queue bound); the
	// message stays parked.
	ErrUnroutable = errors.New("unroutable: no queue is bound for that exchange and routing key")
	// ErrBadFilter: a filter expression does not compile (the caller's
	// mistake, not the broker's).
	ErrBadFilter = errors.New("bad filter")
	// ErrBadSelection: the options do not say which messages to act on, or
	// say it twice (the caller's mistake).
	ErrBadSelection = errors.New("bad selection")
	// ErrInvalidBody: an edited body is not valid for its content type;
	// nothing was sent and the message is still parked.
	ErrInvalidBody = errors.New("invalid body")
	// ErrBadImport: an import file has a line that is not an exported
	// message; nothing after it was published.
	ErrBadImport = errors.New("bad import file")
	// ErrTwoDestinations: both a destination and a target say where to
	// send (see CheckDestination).
	ErrTwoDestinations = errors.New("a destination and a target both say where to send; give one")
	// ErrBadTarget: a target other than origin or queue.
	ErrBadTarget = errors.New("unknown target")
	// ErrFailedQueueUnknown: a message is to go to the queue that failed
	// alone, but no header names that queue; send it to a destination or
	// its origin instead.
	ErrFailedQueueUnknown = errors.New("the queue it failed in is not known (no x-original-queue, failed-queue header or rejected x-death entry)")
	// ErrNoImportDestination: an import line does not say which queue it
	// was exported from, and no destination was given.
	ErrNoImportDestination = errors.New("it does not say which queue it was exported from")
)
