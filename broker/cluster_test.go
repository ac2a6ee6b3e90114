//go:build cluster && integration

package broker_test

import (
	"context"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/broker/brokertest/clustertest"
)

// The cluster tests run against the three-node RabbitMQ 4.3 cluster of
// `make cluster` (clustertest.UseCluster) and stop and start its nodes.

func TestClusterDialSaysWhichNodeItIsOn(t *testing.T) {
	clustertest.UseCluster(t)
	m := clustertest.ClusterManagement(t)
	seen := map[string]bool{}
	for i := 0; i < 3; i++ {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		c, err := broker.Dial(ctx, broker.Options{URL: clustertest.ClusterURL(), Name: "parkinglot-test " + t.Name()})
		if err != nil {
			cancel()
			t.Fatal(err)
		}
		start := time.Now()
		node, err := m.NodeOf(ctx, c)
		took := time.Since(start)
		cancel()
		_ = c.Close()
		if err != nil {
			t.Fatal(err)
		}
		want := clustertest.ClusterNodes()[c.Endpoint].Node
		if node != want || c.Endpoints != 3 || strings.Contains(c.URL, "guest:guest") {
			t.Errorf("connection to %s (URL %d of %d) is on %s, want %s", c.URL, c.Endpoint+1, c.Endpoints, node, want)
		}
		seen[node] = true
		t.Logf("dialled %s: node %s (the management API listed it after %v)", c.URL, node, took.Round(time.Millisecond))
	}
}

func TestClusterRedialMovesOnWhenItsNodeStops(t *testing.T) {
	clustertest.UseCluster(t)
	m := clustertest.ClusterManagement(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	opts := broker.Options{URL: clustertest.ClusterURL(), Name: "parkinglot-test " + t.Name()}
	c, err := broker.Dial(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	node, err := m.NodeOf(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	closed := c.NotifyClose(make(chan *amqp.Error, 1))
	stopped := clustertest.ClusterNodeByNode(t, node)
	took := clustertest.StopNode(t, stopped)
	select {
	case e := <-closed:
		t.Logf("connection to %s lost: %v (stop took %v)", node, e, took.Round(time.Millisecond))
	case <-ctx.Done():
		t.Fatal("the connection to the stopped node never closed")
	}

	// The management client fails over too: the stopped node's API is gone.
	if _, err := m.Overview(ctx); err != nil {
		t.Fatalf("management API with one node down: %v", err)
	}
	for i := 0; i < 3; i++ {
		c2, err := broker.Redial(ctx, opts, broker.Backoff{Initial: 50 * time.Millisecond, Max: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		node2, err := m.NodeOf(ctx, c2)
		_ = c2.Close()
		if err != nil {
			t.Fatal(err)
		}
		if node2 == node {
			t.Fatalf("redialled to the stopped node %s", node)
		}
		if i == 0 && c2.Endpoint != (c.Endpoint+1)%3 {
			t.Errorf("redial after losing URL %d went to URL %d, want the next one", c.Endpoint+1, c2.Endpoint+1)
		}
	}
	clustertest.StartNode(t, stopped)
}
