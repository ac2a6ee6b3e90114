// Package retrytest holds the pipeline fixtures of the tests that run the
// retry loop against a real broker (retrycore/daemon's and ui/cli's): a
// pipeline whose names are unique to the test and deleted when it ends,
// its delay-tier queues, and its topology declared.
package retrytest

import (
	"context"
	"testing"
	"time"

	"github.com/parkinglot/parkinglot/broker/brokertest"
	"github.com/parkinglot/parkinglot/retrycore"
)

// Pipeline is a pipeline with names unique to the test, all of which are
// deleted when the test ends; delays are its retry tiers.
func Pipeline(t *testing.T, queueType string, delays ...time.Duration) retrycore.Pipeline {
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
	for _, q := range append([]string{p.Main.Queue, p.Error.Queue}, TierQueues(p)...) {
		brokertest.DeleteQueueAtEnd(t, q)
	}
	for _, ex := range []string{p.Main.Exchange, p.Retry.Exchange, p.Error.Exchange} {
		brokertest.DeleteExchangeAtEnd(t, ex)
	}
	return p
}

// TierQueues are p's delay-tier queues.
func TierQueues(p retrycore.Pipeline) []string {
	var qs []string
	for _, tier := range p.Tiers() {
		qs = append(qs, tier.Queue)
	}
	return qs
}

// Declare declares p's topology before a test publishes into it.
func Declare(t *testing.T, p retrycore.Pipeline) {
	t.Helper()
	conn := brokertest.Dial(t, "")
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	defer ch.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := retrycore.Declare(ctx, ch, p, retrycore.DeclareOptions{Server: conn.ServerVersion, Management: brokertest.Management(t)}); err != nil {
		t.Fatal(err)
	}
}
