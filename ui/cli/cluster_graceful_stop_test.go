//go:build cluster && integration

package cli_test

import (
	"testing"

	"github.com/parkinglot/parkinglot/broker/brokertest/clustertest"
	"github.com/parkinglot/parkinglot/retrycore"
)

// TestClusterGracefulStopRedeliversNothing is TestGracefulStopRedeliversNothing
// on the three-node cluster (--url lists its nodes; a quorum queue's leader
// may be on another node than the daemon's connections): the daemon is
// stopped with SIGTERM 20 times mid-stream and restarted; no node is
// stopped. No message handled and acked before a stop is handled again.
func TestClusterGracefulStopRedeliversNothing(t *testing.T) {
	clustertest.UseCluster(t)
	for _, qt := range []string{retrycore.QueueClassic, retrycore.QueueQuorum} {
		t.Run(qt, func(t *testing.T) {
			runGracefulStops(t, qt, 20)
		})
	}
}
