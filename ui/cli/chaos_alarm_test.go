//go:build chaos && integration

package cli_test

import (
	"testing"
	"time"

	"github.com/parkinglot/parkinglot/retrycore"
)

// TestChaosResourceAlarmLosesNothing raises the broker's memory alarm while
// the daemon binary works off 2,000 messages: the daemon logs
// connection.blocked, its retries and parks wait, acks go on over the
// consuming connection, and once the alarm clears every message is done or
// parked with none missing and no duplicates (a blocked publish sends
// nothing). The alarm blocks every publisher on the broker, so it runs in
// the serial chaos step.
func TestChaosResourceAlarmLosesNothing(t *testing.T) {
	runConservation(t, conservationSpec{
		queueType:   retrycore.QueueClassic,
		messages:    2000,
		alarms:      1,
		prefetch:    20,
		concurrency: 6,
		timeout:     2 * time.Minute,
	})
}
