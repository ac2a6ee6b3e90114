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
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("not within %s: %s", timeout, what())
		}
		time.Sleep(interval)
	}
}
