package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/parkinglot/parkinglot/replay"
)

// An interrupted run (Ctrl-C, SIGTERM) of replay, delete, export or import
// tells one summary — what it did, how many are still parked (counted on
// the queue once the run has given back what it held), nothing lost — and
// exits 130, as shells expect. The messages it did not do are not listed
// on a terminal; -o json reports each as before, and its last line says
// interrupted and still_parked.

// ExitInterrupted is the status of an interrupted command (128 + SIGINT).
const ExitInterrupted = 130

// InterruptedError is an interrupted command; Said: its summary is printed
// already, so the root adds no line.
type InterruptedError struct {
	Err  error
	Said bool
}

func (e *InterruptedError) Error() string { return "interrupted" }
func (e *InterruptedError) Unwrap() error { return e.Err }

// interrupted reports whether a run's error is the interrupt.
func interrupted(err error) bool { return errors.Is(err, context.Canceled) }

// leftOver says what an interrupted run left where it was: a count of
// the queue's ready messages ("4208 still parked in dlq"), or for an
// import the file's rest. ok is false when it could not be told.
type leftOver func() (text string, n int, ok bool)

// countWait bounds the count after an interrupted run.
const countWait = 5 * time.Second

// stillParked counts queue's ready messages once the interrupted run gave
// back what it held: a passive declare, read again until two reads agree
// (a quorum queue applies returns a moment later), within countWait.
func stillParked(ctx context.Context, s Session, queue string) leftOver {
	return func() (string, int, bool) {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), countWait)
		defer cancel()
		n, err := s.ReadyCount(cctx, queue)
		for err == nil {
			t := time.NewTimer(100 * time.Millisecond)
			select {
			case <-cctx.Done():
				t.Stop()
				return fmt.Sprintf("%d still parked in %s", n, queue), n, true
			case <-t.C: // the broker tells no one when a return is applied
			}
			var again int
			if again, err = s.ReadyCount(cctx, queue); err == nil && again == n {
				return fmt.Sprintf("%d still parked in %s", n, queue), n, true
			}
			n = again
		}
		return "the rest still parked in " + queue + " (not counted: " + firstLine(err.Error()) + ")", 0, false
	}
}

// writeInterrupted is the one line of an interrupted run.
func writeInterrupted(w io.Writer, verb string, res replay.Result, left string) error {
	line := fmt.Sprintf("interrupted: %s %d message(s)", verb, res.Done)
	if left != "" {
		line += ", " + left
	}
	_, err := fmt.Fprintln(w, line+"; nothing lost")
	return err
}

// reportInterrupted prints an interrupted run's summary: one line on a
// terminal (not each message not done), or with -o json the result line
// with interrupted and still_parked; the error exits 130 with no more said.
func reportInterrupted(f *Factory, w io.Writer, verb string, left leftOver, res replay.Result, err error) error {
	text, n, counted := "", 0, false
	if left != nil {
		text, n, counted = left()
	}
	if f.JSON() {
		rj := newResultJSON(res)
		rj.Interrupted = true
		if counted {
			rj.StillParked = &n
		}
		_ = WriteJSONLines(w, []ResultJSON{rj})
	} else {
		_ = writeInterrupted(w, verb, res, text)
	}
	return &InterruptedError{Err: err, Said: true}
}
