package format

import (
	"testing"

	"github.com/parkinglot/parkinglot/retrycore"
)

// TestTopologyDetail: a declare's detail as it is; a removal's adds what
// was discarded or why something was kept.
func TestTopologyDetail(t *testing.T) {
	for _, c := range []struct {
		e    retrycore.ReportEntry
		want string
	}{
		{retrycore.ReportEntry{Detail: "direct"}, "direct"},
		{retrycore.ReportEntry{Detail: "parking lot", Discarded: 3}, "parking lot, 3 message(s) discarded"},
		{retrycore.ReportEntry{Detail: "main", Kept: retrycore.KeptNotEmpty}, "main, not empty"},
		{retrycore.ReportEntry{Detail: "main", Kept: retrycore.KeptConsumers, Consumers: 2}, "main, 2 consumer(s): stop them first"},
		{retrycore.ReportEntry{Kept: retrycore.KeptBound}, "still bound"},
	} {
		if got := TopologyDetail(c.e); got != c.want {
			t.Errorf("%+v: %q, want %q", c.e, got, c.want)
		}
	}
}
