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
	// ErrDeclined: the person at the prompt did not answer yes ("n", an
	// empty line, end of input or Ctrl-C); nothing changed (exit 2).
	ErrDeclined = errors.New("nothing changed")
	// ErrUnroutable: the broker returned the copy (no queue bound); the
	// message stays parked.
	ErrUnroutable = errors.New("unroutable: no queue is bound for that exchange and routing key")
	// ErrNacked: the broker refused the copy (for example a full queue with
	// x-overflow reject-publish); the message stays parked.
	ErrNacked = errors.New("the broker refused the copy (nack)")
	// ErrBadFilter: a --filter expression does not compile (a usage error,
	// exit 2).
	ErrBadFilter = errors.New("bad filter")
	// ErrBadSelection: the options do not say which messages to act on, or
	// say it twice (a usage error, exit 2).
	ErrBadSelection = errors.New("bad selection")
	// ErrEditor: $EDITOR is missing or failed; nothing was changed.
	ErrEditor = errors.New("editor")
	// ErrInvalidBody: an edited body is not valid for its content type;
	// nothing was sent and the message is still parked.
	ErrInvalidBody = errors.New("invalid body")
	// ErrBadImport: an import file has a line that is not an exported
	// message; nothing after it was published.
	ErrBadImport = errors.New("bad import file")
)
