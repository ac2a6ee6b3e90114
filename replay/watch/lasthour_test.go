package watch

import (
	"testing"
	"time"

	"github.com/parkinglot/parkinglot/broker"
)

// TestArrivalsSince: the last hour's arrivals are the counter less its
// newest sample from an hour ago or earlier; unknown when the samples do
// not reach back or the counter restarted.
func TestArrivalsSince(t *testing.T) {
	now := time.Date(2026, 12, 5, 3, 30, 20, 0, time.UTC)
	since := now.Add(-time.Hour)
	minute := func(ago int, count int64) broker.PublishSample {
		return broker.PublishSample{Count: count, At: now.Truncate(time.Minute).Add(-time.Duration(ago) * time.Minute)}
	}
	for _, tc := range []struct {
		name    string
		total   int64
		samples []broker.PublishSample
		want    int64
		ok      bool
	}{
		{"newest first, an hour back", 50, []broker.PublishSample{minute(0, 48), minute(30, 20), minute(59, 12), minute(60, 10)}, 40, true},
		{"oldest first too", 50, []broker.PublishSample{minute(60, 10), minute(61, 9), minute(0, 48)}, 40, true},
		{"a queue younger than the hour", 3, []broker.PublishSample{minute(0, 3), minute(60, 0)}, 3, true},
		{"samples reach back less than an hour", 50, []broker.PublishSample{minute(0, 48), minute(10, 20)}, 0, false},
		{"no samples", 50, nil, 0, false},
		{"the counter restarted", 5, []broker.PublishSample{minute(0, 5), minute(60, 900)}, 0, false},
	} {
		got, ok := arrivalsSince(tc.total, tc.samples, since)
		if got != tc.want || ok != tc.ok {
			t.Errorf("%s: arrivalsSince = %d, %v; want %d, %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
}
