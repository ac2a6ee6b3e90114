package ui

import (
	"context"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/replay"
)

// Cluster is which node the TUI's connection is on and the cluster's
// nodes: on a cluster, a queue's leader may be on a node that is down or in
// an alarm, and the queues screen says so before an action fails there.
type Cluster struct {
	// Conn is the connection's URL (the one of the list in use) and node;
	// Node is "" until the management API says.
	Conn replay.ConnNode
	// Nodes are the cluster's nodes: running, in a memory or disk alarm,
	// partitioned (one on a single broker).
	Nodes []broker.NodeInfo
}

// clusterLoadedMsg is loadCluster's answer.
type clusterLoadedMsg struct {
	info Cluster
	err  error
}

// loadCluster asks the backend which node the connection is on and how
// the nodes are. The management API may take a few seconds to list a new
// connection; the answer comes back as a message whenever it is ready and
// the status bar shows the URL meanwhile.
func loadCluster(c *common) tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(c.ctx, 10*time.Second)
		defer cancel()
		info, err := c.backend.Cluster(ctx)
		return clusterLoadedMsg{info: info, err: err}
	}
}

// clusterCmd starts loadCluster unless one is still waiting for its
// answer.
func (m *Model) clusterCmd() tea.Cmd {
	if m.clusterLoading {
		return nil
	}
	m.clusterLoading = true
	return loadCluster(m.c)
}

// connDescribe is the status bar's connection: the URL in use and the
// node it is on once known ("rabbitc2@localhost · amqp://…:5682/ vhost
// /"), else the URL(s) the TUI was given.
func (m *Model) connDescribe() string {
	c := m.cluster.Conn
	if c.Node == "" || c.Describe == "" {
		return m.c.describe
	}
	return c.Node + " · " + c.Describe
}

// nodeNamer shortens node names for the queues screen
// (replay.NodeNamer over the cluster's nodes and the queues' replicas).
func nodeNamer(nodes []broker.NodeInfo, rows []QueueRow) func(string) string {
	lists := [][]string{replay.NodeNames(nodes)}
	for _, r := range rows {
		lists = append(lists, r.Members, []string{r.Node})
	}
	return replay.NodeNamer(lists...)
}

// clusterFacts is what the queues screen's info line says about the
// nodes and the selected queue: the nodes down or in an alarm, then where
// the queue lives (on a cluster) or why it cannot be used now. warn is
// true when there is something wrong.
func clusterFacts(nodes []broker.NodeInfo, rows []QueueRow, sel *QueueRow) (facts []string, warn bool) {
	name := nodeNamer(nodes, rows)
	if t := replay.NodeTrouble(nodes, name); len(t) > 0 {
		facts = append(facts, "nodes: "+strings.Join(t, "; "))
		warn = true
	}
	if sel == nil {
		return facts, warn
	}
	r := QueueRow(replay.ReconcileRow(replay.QueueRow(*sel), nodes))
	sel = &r
	if u := replay.Unavailable(sel.QueueInfo, sel.ParkingLot, name); u != "" {
		return append(facts, "▸ "+u), true
	}
	if len(nodes) > 1 || len(sel.Members) > 1 {
		if p := replay.Placement(sel.QueueInfo, name); p != "" {
			facts = append(facts, "▸ "+p)
		}
	}
	return facts, warn
}
