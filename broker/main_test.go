//go:build integration

package broker_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if a test leaves goroutines running (a pass or
// connection not closed).
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		// amqp091-go's connection reader may still be unwinding right after Close.
		goleak.IgnoreTopFunction("github.com/rabbitmq/amqp091-go.(*Connection).reader"),
		goleak.IgnoreTopFunction("internal/poll.runtime_pollWait"),
	)
}
