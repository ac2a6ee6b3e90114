package daemon

import (
	"context"
	"errors"

	"github.com/parkinglot/parkinglot/retrycore"
)

// PermanentError marks a failure that retrying cannot fix (poison message):
// the loop parks the message at once.
type PermanentError struct{ Err error }

func (e *PermanentError) Error() string { return e.Err.Error() }

// Unwrap returns the cause.
func (e *PermanentError) Unwrap() error { return e.Err }

// Permanent wraps err so the consumer loop parks the message without retrying.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return &PermanentError{Err: err}
}

// IsPermanent reports whether err (or anything it wraps) is permanent.
func IsPermanent(err error) bool {
	var pe *PermanentError
	return errors.As(err, &pe)
}

// Outcome is what the loop does with a message after its handler returned.
type Outcome int

const (
	OutcomeDone    Outcome = iota // ack
	OutcomeRetry                  // publish to the delay tier, then ack
	OutcomePark                   // publish to the parking lot, then ack
	OutcomeRequeue                // shutting down mid-handler: give it back untouched
)

func (o Outcome) String() string {
	return [...]string{"done", "retried", "parked", "requeued"}[o]
}

// Classify decides what happens to a message whose handler returned err
// after `retries` retries, with at most maxRetries allowed. A handler cut off
// by shutdown (ctx cancelled by the loop, not the handler's own timeout) is
// requeued rather than counted as a failure.
func Classify(err error, retries int64, maxRetries int, shuttingDown bool) (Outcome, string) {
	switch {
	case err == nil:
		return OutcomeDone, ""
	case shuttingDown && errors.Is(err, context.Canceled):
		return OutcomeRequeue, ""
	case IsPermanent(err):
		return OutcomePark, retrycore.KindPermanent
	case retries >= int64(maxRetries):
		return OutcomePark, retrycore.KindRetriesExhausted
	default:
		return OutcomeRetry, ""
	}
}
