//go:build integration

package watch_test

import (
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/parkinglot/parkinglot/broker/brokertest"
)

// TestMain fails the package if a test leaves goroutines running, and
// removes the binary the tests built (brokertest.Binary).
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		// amqp091-go's connection reader may still be unwinding right after Close.
		goleak.IgnoreTopFunction("github.com/rabbitmq/amqp091-go.(*Connection).reader"),
		goleak.IgnoreTopFunction("internal/poll.runtime_pollWait"),
		goleak.Cleanup(func(code int) {
			brokertest.RemoveBinary()
			os.Exit(code)
		}),
	)
}
