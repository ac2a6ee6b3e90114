//go:build chaos && integration

package cli_test

import (
	"testing"
	"time"

	"github.com/parkinglot/parkinglot/retrycore"
)

// TestChaosDaemonConservation is the conservation test at full size:
// 10,000 messages through the real daemon binary on a quorum
// pipeline while the daemon is killed with SIGKILL five times (restarted
// each time), its connections are force-closed twice through the
// management API, and the broker is restarted (rabbitmqctl stop_app /
// start_app). None may be missing; duplicates are counted and bounded (see
// runConservation). It restarts the broker, so it runs in `make test`'s
// serial chaos step (build tag chaos).
func TestChaosDaemonConservation(t *testing.T) {
	runConservation(t, conservationSpec{
		queueType:      retrycore.QueueQuorum,
		messages:       10000,
		kills:          5,
		forcedCloses:   2,
		brokerRestarts: 1,
		prefetch:       20,
		concurrency:    8,
		timeout:        4 * time.Minute,
	})
}
