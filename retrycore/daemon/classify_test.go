package daemon

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/parkinglot/parkinglot/retrycore"
)

func TestClassify(t *testing.T) {
	transient := errors.New("db down")
	cases := []struct {
		name         string
		err          error
		retries      int64
		max          int
		shuttingDown bool
		want         Outcome
		kind         string
	}{
		{"success is done", nil, 0, 3, false, OutcomeDone, ""},
		{"success after retries is done", nil, 3, 3, false, OutcomeDone, ""},
		{"first transient failure retries", transient, 0, 3, false, OutcomeRetry, ""},
		{"transient failure with retries left retries", transient, 2, 3, false, OutcomeRetry, ""},
		{"transient failure at the limit parks", transient, 3, 3, false, OutcomePark, retrycore.KindRetriesExhausted},
		{"transient failure past the limit parks", transient, 9, 3, false, OutcomePark, retrycore.KindRetriesExhausted},
		{"permanent failure parks at once", Permanent(transient), 0, 3, false, OutcomePark, retrycore.KindPermanent},
		{"wrapped permanent failure parks", fmt.Errorf("handle: %w", Permanent(transient)), 0, 3, false, OutcomePark, retrycore.KindPermanent},
		{"permanent wins over exhausted", Permanent(transient), 3, 3, false, OutcomePark, retrycore.KindPermanent},
		{"timeout is transient", &TimeoutError{After: 1}, 0, 3, false, OutcomeRetry, ""},
		{"cancelled by shutdown requeues", context.Canceled, 0, 3, true, OutcomeRequeue, ""},
		{"cancelled outside shutdown is transient", context.Canceled, 0, 3, false, OutcomeRetry, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, kind := Classify(c.err, c.retries, c.max, c.shuttingDown)
			if got != c.want || kind != c.kind {
				t.Fatalf("Classify(%v, %d, %d) = %v %q, want %v %q", c.err, c.retries, c.max, got, kind, c.want, c.kind)
			}
		})
	}
}

func TestPermanentNilIsNil(t *testing.T) {
	if Permanent(nil) != nil {
		t.Fatal("Permanent(nil) must be nil so `return Permanent(err)` of a nil err succeeds")
	}
	if IsPermanent(errors.New("x")) {
		t.Fatal("a plain error is not permanent")
	}
}

func TestTimeoutErrorText(t *testing.T) {
	if got := (&TimeoutError{After: 2e9}).Error(); got != "handler timed out after 2s" {
		t.Fatalf("got %q", got)
	}
	if got := (&TimeoutError{After: 2e9, Err: context.DeadlineExceeded}).Error(); got != "handler timed out after 2s" {
		t.Fatalf("a bare context error adds nothing, got %q", got)
	}
	e := &TimeoutError{After: 2e9, Err: &killedError{line: "still working", cause: context.DeadlineExceeded}}
	if got := e.Error(); got != "handler timed out after 2s (process group killed; last stderr: still working)" {
		t.Fatalf("got %q", got)
	}
	if !errors.Is(e, context.DeadlineExceeded) {
		t.Fatal("a TimeoutError is a deadline")
	}
}
