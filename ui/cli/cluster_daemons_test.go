//go:build cluster && integration

package cli_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/parkinglot/parkinglot/broker/brokertest/clustertest"
	"github.com/parkinglot/parkinglot/retrycore"
)

// TestClusterDaemonsShareMainQueueNodeStop runs three daemons on one
// quorum pipeline, each on a different node of the cluster, through a
// 6,000-message conservation run, and stops the node of one of them
// mid-run: the daemons with a connection there move on to the other nodes,
// the others go on consuming the shared main queue, the node comes back,
// and every message ends up done or parked (runConservation accounts for
// each id and bounds the duplicates: prefetch per daemon the stop struck).
func TestClusterDaemonsShareMainQueueNodeStop(t *testing.T) {
	clustertest.UseCluster(t)
	nodes := clustertest.ClusterNodes()
	runConservation(t, conservationSpec{
		queueType:   retrycore.QueueQuorum,
		messages:    6000,
		nodeStops:   1,
		prefetch:    20,
		concurrency: 4,
		timeout:     6 * time.Minute,
		daemons:     3,
		// Daemon i's list starts at node i. The first dial of a process
		// starts at a random URL of its list (broker.Dial), so the
		// order alone does not place it: respread restarts a daemon that
		// shares its node with another until each is on its own node.
		daemonArgs: func(i int) []string {
			var urls []string
			for k := range nodes {
				urls = append(urls, nodes[(i+k)%len(nodes)].AMQP)
			}
			return []string{"--url", strings.Join(urls, ",")}
		},
		respread: func(t *testing.T, ds []*daemonProc) (int, bool) {
			seen := map[string]int{}
			for i, d := range ds {
				node, _ := daemonNodes(t, d)
				if j, ok := seen[node]; ok {
					t.Logf("daemons %d and %d both consume on %s: restarting daemon %d", j, i, node, i)
					return i, true
				}
				seen[node] = i
			}
			var placed []string
			for i, d := range ds {
				consume, publish := daemonNodes(t, d)
				placed = append(placed, fmt.Sprintf("daemon %d: consume %s, publish %s", i, consume, publish))
			}
			t.Logf("placed: %s", strings.Join(placed, "; "))
			return 0, false
		},
		stopDaemonsNode: func(t *testing.T, ds []*daemonProc) func() {
			stopped, _ := daemonNodes(t, ds[0])
			from := map[int]int{}
			for i, d := range ds {
				consume, publish := daemonNodes(t, d)
				if consume == stopped || publish == stopped {
					from[i] = d.log.len()
				}
			}
			cn := clustertest.ClusterNodeByNode(t, stopped)
			took := clustertest.StopNode(t, cn)
			var moved []string
			for i, d := range ds {
				if f, ok := from[i]; ok {
					d.waitConsuming(t, f, 2*time.Minute)
					consume, publish := daemonNodes(t, d)
					moved = append(moved, fmt.Sprintf("daemon %d to consume %s, publish %s", i, consume, publish))
				}
			}
			t.Logf("stopped %s (%v); %s", stopped, took.Round(time.Millisecond), strings.Join(moved, "; "))
			for i, d := range ds {
				if _, ok := from[i]; !ok && d.log.len() > 0 {
					if consume, _ := daemonNodes(t, d); consume == stopped {
						t.Errorf("daemon %d still says it consumes on the stopped %s", i, stopped)
					}
				}
			}
			return func() {
				t.Logf("started %s again (%v)", stopped, clustertest.StartNode(t, cn).Round(time.Millisecond))
			}
		},
	})
}

var (
	consumeURL = regexp.MustCompile(`(?:^| )url=\S*:(\d+)/`)
	publishURL = regexp.MustCompile(` publish_url=\S*:(\d+)/`)
)

// daemonNodes reads, from the daemon's last "consuming" log line, the
// cluster nodes its consume and publish connections are on.
func daemonNodes(t *testing.T, d *daemonProc) (consume, publish string) {
	t.Helper()
	lines := strings.Split(d.log.all(), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if !strings.Contains(lines[i], "msg=consuming") {
			continue
		}
		return nodeOfPort(t, consumeURL, lines[i]), nodeOfPort(t, publishURL, lines[i])
	}
	t.Fatalf("daemon pid %d logged no consuming line:\n%s", d.cmd.Process.Pid, d.log.tail(20))
	return "", ""
}

func nodeOfPort(t *testing.T, re *regexp.Regexp, line string) string {
	t.Helper()
	m := re.FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("no URL in %q", line)
	}
	for _, n := range clustertest.ClusterNodes() {
		if strings.Contains(n.AMQP, ":"+m[1]+"/") {
			return n.Node
		}
	}
	t.Fatalf("%q: port %s is not a cluster node's", line, m[1])
	return ""
}
