//go:build integration

package ui

import (
	"os"
	"testing"

	"github.com/parkinglot/parkinglot/ui/cli/clitest"
	"go.uber.org/goleak"
)

// TestMain fails the package's tests if a goroutine outlives them: every
// browse and action worker must stop when its screen or the program ends.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		// teatest waits for SIGINT in a goroutine it never stops.
		goleak.IgnoreAnyFunction("github.com/charmbracelet/x/exp/teatest.NewTestModel.func2"),
		goleak.IgnoreAnyFunction("os/signal.signal_recv"),
		goleak.IgnoreAnyFunction("os/signal.loop"),
		// The management client's idle keep-alive connections.
		goleak.IgnoreAnyFunction("net/http.(*persistConn).readLoop"),
		goleak.IgnoreAnyFunction("net/http.(*persistConn).writeLoop"),
		goleak.Cleanup(func(code int) {
			clitest.RemoveBinary() // the binary the CLI tests built
			os.Exit(code)
		}),
	)
}
