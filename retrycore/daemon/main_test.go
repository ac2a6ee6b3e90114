//go:build integration

package daemon

import (
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/parkinglot/parkinglot/ui/cli/clitest"
)

// TestMain fails the package's tests if any goroutine outlives them: the
// consumer loop must stop everything it started.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		// The management client's keep-alive connections (net/http's
		// shared transport) idle between requests by design.
		goleak.IgnoreAnyFunction("net/http.(*persistConn).readLoop"),
		goleak.IgnoreAnyFunction("net/http.(*persistConn).writeLoop"),
		goleak.Cleanup(func(code int) {
			clitest.RemoveBinary() // the binary the CLI tests built
			os.Exit(code)
		}),
	)
}
