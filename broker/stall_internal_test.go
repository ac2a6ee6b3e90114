package broker

import (
	"testing"
	"time"
)

// TestStallLimit: only a classic queue that has delivered is waited for
// longer than 15 s; a first delivery, a quorum queue (silence may be a lost
// majority) and a queue of unknown type keep the 15-s rule.
func TestStallLimit(t *testing.T) {
	for _, tc := range []struct {
		queueType string
		seen      int
		want      time.Duration
	}{
		{"classic", 0, stallAfter},
		{"classic", 1, stallAfterClassic},
		{"classic", 400000, stallAfterClassic},
		{"quorum", 0, stallAfter},
		{"quorum", 400000, stallAfter},
		{"", 400000, stallAfter},
	} {
		if got := stallLimit(tc.queueType, tc.seen); got != tc.want {
			t.Errorf("stallLimit(%q, %d) = %v, want %v", tc.queueType, tc.seen, got, tc.want)
		}
	}
}
