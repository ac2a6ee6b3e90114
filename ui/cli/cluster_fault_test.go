//go:build cluster && integration

package cli_test

import (
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/parkinglot/parkinglot/broker/brokertest"
	"github.com/parkinglot/parkinglot/broker/brokertest/clustertest"
)

// TestClusterClientNodeStopMidPassLosesNothing is the fault matrix's
// cluster row: on the three-node 4.3 cluster, a parking lot the delivery
// limit filled (each message arriving with x-delivery-count 21 against the
// lot's default limit of 20) is held by a command, and the node its
// connection is on stops (every connection to it drops; the lot's leader
// too when it lived there). Every message is still parked afterwards, at
// the destination (replay) or deleted with an audit entry (delete).
func TestClusterClientNodeStopMidPassLosesNothing(t *testing.T) {
	const n = 1000
	clustertest.UseCluster(t)
	m := clustertest.ClusterManagement(t)
	for _, c := range faultCommands() {
		if !slices.Contains([]string{"list", "export", "delete", "replay"}, c.name) {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			fc := startFaultCell(t, c, n, "parkinglot-node-stop", quorumArgs, 5*time.Minute)
			lot, sink, state, cmd, out, connName, stderr := fc.lot, fc.sink, fc.state, fc.cmd, fc.out, fc.connName, fc.stderr
			var node string
			for _, nd := range clustertest.ConnectionNodes(t, m, connName, 30*time.Second) {
				node = nd
			}
			took := clustertest.StopNode(t, clustertest.ClusterNodeByNode(t, node))
			go func() { _, _ = out.WriteTo(discard{}) }()
			if c.name == "replay" {
				// A replay re-dials another node and goes on; it is stopped
				// as a person would once the cut is seen.
				_ = cmd.Process.Signal(syscall.SIGTERM)
			}
			_ = cmd.Wait()
			removed, where := faultRemoved(t, c, state)
			parked, sent := settledDepths(t, lot, sink, n, removed)
			brokertest.Figures(t, "fault mid-pass, lot filled by the delivery limit: %s / its node %s stopped (%v): lost %d of %d (parked %d, %s %d, both %d)",
				c.name, node, took.Round(time.Millisecond), max(0, n-parked-sent), n, parked, where, sent, max(0, parked+sent-n))
			if parked+sent < n {
				t.Fatalf("%s, its node stopped: lost %d of %d (parked %d, %s %d); stderr: %s", c.name, n-parked-sent, n, parked, where, sent, stderr.String())
			}
			clustertest.StartNode(t, clustertest.ClusterNodeByNode(t, node))
		})
	}
}
