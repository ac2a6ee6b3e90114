//go:build integration

package daemon

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests if any goroutine outlives them: the
// consumer loop must stop everything it started.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		// The management client's keep-alive connections (net/http's
		// shared transport) idle between requests by design.
		goleak.IgnoreAnyFunction("net/http.(*persistConn).readLoop"),
		goleak.IgnoreAnyFunction("net/http.(*persistConn).writeLoop"),
	)
}
