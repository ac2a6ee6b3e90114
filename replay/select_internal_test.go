package replay

import (
	"errors"
	"testing"
)

// An id the id set cannot hold is a bad selection, worded as before the
// set moved to store (the CLI maps ErrBadSelection to its usage exit code).
func TestAnEmptyIDIsABadSelection(t *testing.T) {
	_, err := newSelection(Selector{IDs: []string{"a", ""}}, true, nil)
	if !errors.Is(err, ErrBadSelection) || err.Error() != "bad selection: an empty id" {
		t.Fatalf("err = %v, want ErrBadSelection: an empty id", err)
	}
}
