package brokertest

import (
	"testing"
	"time"
)

// Eventually asks cond every interval until it holds, and fails the test
// with what() once timeout has passed first. It is the one way tests wait
// for a condition they cannot be told about (a queue's depth, the
// management API's view), bounded, never a bare sleep.
func Eventually(tb testing.TB, timeout, interval time.Duration, cond func() bool, what func() string) {
	tb.Helper()
	if !Poll(timeout, interval, cond) {
		tb.Fatalf("not within %s: %s", timeout, what())
	}
}

// Poll is Eventually for a caller that decides what a timeout means (an
// error among others, or a count checked afterwards): it reports whether
// cond held within timeout.
func Poll(timeout, interval time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(interval)
	}
	return true
}
