//go:build integration

package cli_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/parkinglot/parkinglot/broker/brokertest"
	"github.com/parkinglot/parkinglot/retrycore"
)

// Helpers of the daemon tests, as retrycore's own tests have them.

// testPipeline is a pipeline with names unique to the test, all of which
// are deleted when the test ends.
func testPipeline(t *testing.T, queueType string, delays ...time.Duration) retrycore.Pipeline {
	t.Helper()
	name := brokertest.Name(t, "")
	p := retrycore.Pipeline{
		Name:           name,
		QueueType:      queueType,
		Main:           retrycore.MainPath{Exchange: name + ".main", Queue: name + ".main.queue", RoutingKey: "work"},
		Retry:          retrycore.RetryPath{Exchange: name + ".retry", RoutingKey: "retry"},
		Error:          retrycore.ErrorPath{Exchange: name + ".error", Queue: name + ".dlq", RoutingKey: "error"},
		MaxRetries:     3,
		Prefetch:       10,
		Concurrency:    2,
		HandlerTimeout: retrycore.NewDelay(10 * time.Second),
	}
	for _, d := range delays {
		p.Retry.Delays = append(p.Retry.Delays, retrycore.NewDelay(d))
	}
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, q := range append([]string{p.Main.Queue, p.Error.Queue}, tierQueues(p)...) {
		brokertest.DeleteQueueAtEnd(t, q)
	}
	for _, ex := range []string{p.Main.Exchange, p.Retry.Exchange, p.Error.Exchange} {
		brokertest.DeleteExchangeAtEnd(t, ex)
	}
	return p
}

func tierQueues(p retrycore.Pipeline) []string {
	var qs []string
	for _, tier := range p.Tiers() {
		qs = append(qs, tier.Queue)
	}
	return qs
}

// handlerScript is a test handler under testdata/handlers, by absolute path.
func handlerScript(t *testing.T, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("..", "..", "testdata", "handlers", name))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatal(err)
	}
	return p
}
