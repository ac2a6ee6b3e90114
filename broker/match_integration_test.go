//go:build integration

package broker_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/broker/brokertest"
)

// CheckManagement against the broker under test and its own management
// API: one cluster, the cluster name the AMQP server properties carry is
// the one the management API reports, and the node list holds the node.
// A management API that does not answer is ErrNoManagement, not a
// mismatch.
func TestCheckManagementSameBroker(t *testing.T) {
	c := brokertest.Dial(t, "parkinglot test check management")
	m := brokertest.Management(t)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if err := broker.CheckManagement(ctx, m, c, broker.Options{URL: brokertest.URL()}); err != nil {
		t.Fatalf("the broker and its own management API: %v", err)
	}
	facts, err := m.Facts(ctx)
	if err != nil {
		t.Fatalf("facts: %+v, %v", facts, err)
	}
	if c.ClusterName() == "" || facts.Cluster != c.ClusterName() {
		t.Errorf("cluster_name: AMQP %q, management %q", c.ClusterName(), facts.Cluster)
	}
	nodes, err := m.Nodes(ctx)
	if err != nil || len(nodes) == 0 || !slices.Contains(facts.Nodes, nodes[0].Name) || facts.Node != nodes[0].Name {
		t.Errorf("facts %+v do not name %+v (%v)", facts, nodes, err)
	}

	dead, err := broker.NewManagement("http://guest:guest@127.0.0.1:1", "/")
	if err != nil {
		t.Fatal(err)
	}
	err = broker.CheckManagement(ctx, dead, c, broker.Options{URL: brokertest.URL()})
	if !errors.Is(err, broker.ErrNoManagement) || errors.Is(err, broker.ErrManagementMismatch) {
		t.Errorf("a management API that does not answer: %v, want ErrNoManagement", err)
	}
}
