//go:build integration

package replay_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if a test leaves goroutines running (a run's
// loop or committer, a pass, a connection).
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		// amqp091-go's connection reader may still be unwinding right after Close.
		goleak.IgnoreTopFunction("github.com/rabbitmq/amqp091-go.(*Connection).reader"),
		goleak.IgnoreTopFunction("internal/poll.runtime_pollWait"),
	)
}
