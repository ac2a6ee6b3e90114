package clustertest

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/broker/brokertest"
)

// ClusterNode is one node of the three-node RabbitMQ 4.3 cluster that
// `make cluster` (.ci/brokers cluster) runs on this machine.
type ClusterNode struct {
	Name       string // .ci/brokers name: cluster-1, cluster-2, cluster-3
	Node       string // RabbitMQ node name: rabbitc1@localhost …
	AMQP       string // amqp://guest:guest@127.0.0.1:5681/ …
	Management string // http://guest:guest@127.0.0.1:15681 …
}

// ClusterNodes are the cluster's three nodes.
func ClusterNodes() []ClusterNode {
	out := make([]ClusterNode, 3)
	for i := range out {
		n := i + 1
		out[i] = ClusterNode{
			Name:       fmt.Sprintf("cluster-%d", n),
			Node:       fmt.Sprintf("rabbitc%d@localhost", n),
			AMQP:       fmt.Sprintf("amqp://guest:guest@127.0.0.1:%d/", 5680+n),
			Management: fmt.Sprintf("http://guest:guest@127.0.0.1:%d", 15680+n),
		}
	}
	return out
}

// ClusterURL is the three nodes' AMQP URLs, comma-separated (what
// --url takes for a cluster).
func ClusterURL() string { return joinNodes(func(n ClusterNode) string { return n.AMQP }) }

// ClusterManagementURL is the three nodes' management URLs, comma-separated.
func ClusterManagementURL() string {
	return joinNodes(func(n ClusterNode) string { return n.Management })
}

func joinNodes(f func(ClusterNode) string) string {
	var out []string
	for _, n := range ClusterNodes() {
		out = append(out, f(n))
	}
	return strings.Join(out, ",")
}

// ClusterNodeByNode finds a node by its RabbitMQ node name.
func ClusterNodeByNode(t testing.TB, node string) ClusterNode {
	t.Helper()
	for _, n := range ClusterNodes() {
		if n.Node == node {
			return n
		}
	}
	t.Fatalf("%q is not a node of the test cluster", node)
	return ClusterNode{}
}

// UseCluster points the test (and the binaries it runs, through
// PARKINGLOT_URL / PARKINGLOT_MANAGEMENT_URL set by the CLI helpers from
// AMQP_URL / MANAGEMENT_URL) at the whole cluster, starting it with
// `.ci/brokers cluster` (idempotent) when a node does not answer, and
// restarts every node at the end of the test, whatever it stopped.
func UseCluster(t *testing.T) {
	t.Helper()
	if !clusterUp() {
		brokersScript(t, 10*time.Minute, "cluster")
	}
	t.Setenv("AMQP_URL", ClusterURL())
	t.Setenv("MANAGEMENT_URL", ClusterManagementURL())
	// rabbitmqctl of a node that the tests never stop first … any node
	// answers for cluster-wide settings.
	t.Setenv("PARKINGLOT_RABBITMQCTL", "/var/lib/parkinglot-brokers/bin/rabbitmqctl-cluster-1")
	t.Setenv("PARKINGLOT_BROKER", "cluster")
	t.Cleanup(func() {
		if !clusterUp() {
			brokersScript(t, 10*time.Minute, "cluster")
		}
	})
}

// clusterUp reports whether each node answers its management API.
func clusterUp() bool {
	for _, n := range ClusterNodes() {
		m, err := broker.NewManagement(n.Management, "/")
		if err != nil {
			return false
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, err = m.Overview(ctx)
		cancel()
		m.Close()
		if err != nil {
			return false
		}
	}
	return true
}

// brokersScript runs .ci/brokers ARGS… from the repository root.
func brokersScript(t testing.TB, timeout time.Duration, args ...string) {
	t.Helper()
	if err := runBrokers(timeout, args...); err != nil {
		t.Fatal(err)
	}
}

// runBrokers runs .ci/brokers ARGS… from the repository root (any
// goroutine: it does not fail the test itself).
func runBrokers(timeout time.Duration, args ...string) error {
	root, err := brokertest.ModuleRoot()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(root, ".ci", "brokers"), args...)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf(".ci/brokers %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return nil
}

// StopNodes stops several nodes at once (two of three: the survivor is a
// minority) and returns how long the stops took. The nodes are started
// again when the test ends, together (StartCluster), unless StartCluster
// ran first: a 4.3 node started alone while the others are down waits for
// a majority.
func StopNodes(t *testing.T, nodes ...ClusterNode) time.Duration {
	t.Helper()
	t.Cleanup(func() {
		if !clusterUp() {
			StartCluster(t)
		}
	})
	start := time.Now()
	errs := make(chan error, len(nodes))
	for _, n := range nodes {
		go func() { errs <- runBrokers(2*time.Minute, "stop", n.Name) }()
	}
	var failed []error
	for range nodes {
		if err := <-errs; err != nil {
			failed = append(failed, err)
		}
	}
	if len(failed) > 0 {
		t.Fatal(errors.Join(failed...))
	}
	return time.Since(start)
}

// StartCluster starts every stopped node together (`.ci/brokers cluster`,
// idempotent) and waits (bounded) until all three answer AMQP and their
// management API and the cluster reports three running nodes.
func StartCluster(t testing.TB) time.Duration {
	t.Helper()
	start := time.Now()
	brokersScript(t, 10*time.Minute, "cluster")
	return time.Since(start)
}

// StopNode stops one cluster node (its whole Erlang VM: every connection to
// it drops, its queue replicas go away) and returns how long the stop took.
// The node is started again when the test ends, unless StartNode ran first.
func StopNode(t *testing.T, n ClusterNode) time.Duration {
	t.Helper()
	t.Cleanup(func() { brokersScript(t, 5*time.Minute, "start", n.Name) })
	start := time.Now()
	brokersScript(t, 2*time.Minute, "stop", n.Name)
	return time.Since(start)
}

// StartNode starts a stopped node and waits (bounded) until it answers
// AMQP and its management API. A node boots only while a majority of the
// cluster is reachable (Khepri).
func StartNode(t testing.TB, n ClusterNode) time.Duration {
	t.Helper()
	start := time.Now()
	brokersScript(t, 5*time.Minute, "start", n.Name)
	return time.Since(start)
}

// ClusterManagement is a management client of the whole cluster (fails over
// between the nodes).
func ClusterManagement(t testing.TB) *broker.Management {
	t.Helper()
	m, err := broker.NewManagement(ClusterManagementURL(), "/")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	return m
}

// ConnectionNodes waits (bounded) until the management API lists a
// connection whose client-given name starts with prefix, and returns the
// node of each such connection by its client-given name.
func ConnectionNodes(t testing.TB, m *broker.Management, prefix string, timeout time.Duration) map[string]string {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		conns, err := m.Connections(ctx)
		cancel()
		if err != nil {
			t.Fatalf("list connections: %v", err)
		}
		out := map[string]string{}
		for _, c := range conns {
			if strings.HasPrefix(c.ClientName(), prefix) {
				out[c.ClientName()] = c.Node
			}
		}
		if len(out) > 0 {
			return out
		}
		if time.Now().After(deadline) {
			t.Fatalf("the management API listed no connection named %q… within %v", prefix, timeout)
		}
		time.Sleep(250 * time.Millisecond) // polling the management API with a deadline
	}
}

// QueueLeader reads the queue from the management API, waiting (bounded)
// until it has a leader: a quorum queue's elected leader, or a classic
// queue's home node (QueueInfo.Home).
func QueueLeader(t testing.TB, m *broker.Management, queue string) broker.QueueInfo {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		q, err := m.Queue(ctx, queue)
		cancel()
		if err == nil && q.Home() != "" {
			return q
		}
		if time.Now().After(deadline) {
			t.Fatalf("queue %s: no leader within 60s (%v)", queue, err)
		}
		time.Sleep(250 * time.Millisecond) // polling the management API with a deadline
	}
}
