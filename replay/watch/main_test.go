//go:build integration

package watch_test

import (
	"os"
	"testing"

	"github.com/parkinglot/parkinglot/ui/cli/clitest"
	"go.uber.org/goleak"
)

// TestMain fails the package if a test leaves goroutines running, and
// removes the binary the tests built (clitest.Binary).
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		// amqp091-go's connection reader may still be unwinding right after Close.
		goleak.IgnoreTopFunction("github.com/rabbitmq/amqp091-go.(*Connection).reader"),
		goleak.IgnoreTopFunction("internal/poll.runtime_pollWait"),
		goleak.Cleanup(func(code int) {
			clitest.RemoveBinary()
			os.Exit(code)
		}),
	)
}
