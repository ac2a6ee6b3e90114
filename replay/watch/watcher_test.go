package watch

import (
	"slices"
	"testing"
)

// TestARepeatedVhostIsWatchedOnce: `--vhost / --vhost /` watches the vhost
// once, so no series is exported twice (Prometheus would refuse the whole
// scrape).
func TestARepeatedVhostIsWatchedOnce(t *testing.T) {
	w := New(Options{Vhosts: []string{"/", "orders", "/"}, Queues: []string{"a.dlq"}})
	var got []string
	for _, sn := range w.Snapshots() {
		got = append(got, sn.Vhost+" "+sn.Queue)
	}
	if want := []string{"/ a.dlq", "orders a.dlq"}; !slices.Equal(got, want) {
		t.Errorf("snapshots %q, want %q", got, want)
	}
}
