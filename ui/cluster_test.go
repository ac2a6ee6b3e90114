package ui

import (
	"strings"
	"testing"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/replay"
)

// seedCluster is the demo's queues on a three-node cluster with one node
// stopped: the parking lot is a quorum queue that kept its majority, the
// delay queue a quorum queue that lost it, a classic queue's home node is
// the stopped one.
func seedCluster(f *fakeBackend) {
	seedDemo(f)
	c1, c2, c3 := "rabbitc1@localhost", "rabbitc2@localhost", "rabbitc3@localhost"
	all := []string{c1, c2, c3}
	f.queues[0].QueueInfo = broker.QueueInfo{Name: "demo.error.dlq", Type: "quorum", State: "running", Leader: c1, Members: all, Online: []string{c1, c2}}
	f.queues[1].QueueInfo = broker.QueueInfo{Name: "demo.main.queue", Type: "classic", State: "down", Node: c3, Consumers: 1}
	f.queues[2].QueueInfo = broker.QueueInfo{Name: "demo.retry.1s", Type: "quorum", State: "minority", Leader: c2, Members: all, Online: []string{c1}}
	f.cluster = Cluster{
		Conn:  replay.ConnNode{URL: "amqp://guest:xxxxx@127.0.0.1:5682/", Node: c2, Describe: "amqp://guest:xxxxx@127.0.0.1:5682/ vhost /"},
		Nodes: []broker.NodeInfo{{Name: c1, Running: true}, {Name: c2, Running: true, MemAlarm: true}, {Name: c3}},
	}
}

func TestClusterFactsOnTheQueuesScreen(t *testing.T) {
	fb := newFakeBackend(t.TempDir())
	seedCluster(fb)
	hs := newHarness(t, fb, "", 160, 20)
	for _, want := range []string{
		"rabbitc2@localhost · amqp://guest:xxxxx@127.0.0.1:5682/ vhost /", // the status bar: node, URL in use
		"nodes: rabbitc2 memory alarm; rabbitc3 down",                     // the nodes in trouble
		"▸ leader rabbitc1, 2/3 online",                                   // the selected queue
	} {
		hs.untilScreen(want)
	}
	hs.press("down")
	if scr := hs.screen(); !strings.Contains(scr, "▸ home node rabbitc3 is down: a classic queue lives on that one node") {
		t.Errorf("a classic queue whose node is down:\n%s", scr)
	}
	hs.press("down")
	if scr := hs.screen(); !strings.Contains(scr, "▸ no leader: 2 of 3 members down (rabbitc2, rabbitc3)") {
		t.Errorf("a quorum queue in a minority:\n%s", scr)
	}
}

// On a single broker nothing about nodes is said, and the status bar
// shows the node once known.
func TestClusterFactsSingleNode(t *testing.T) {
	fb := newFakeBackend(t.TempDir())
	seedDemo(fb)
	fb.queues[0].Node = "rabbit@localhost"
	fb.cluster = Cluster{
		Conn:  replay.ConnNode{URL: "amqp://guest:xxxxx@127.0.0.1:5672/", Node: "rabbit@localhost", Describe: "amqp://guest:xxxxx@127.0.0.1:5672/ vhost /"},
		Nodes: []broker.NodeInfo{{Name: "rabbit@localhost", Running: true}},
	}
	hs := newHarness(t, fb, "", 100, 20)
	// The node and the queue list arrive in either order: wait for both.
	hs.untilScreen("rabbit@localhost · amqp://")
	hs.untilScreen("1 parking lot(s)")
	scr := hs.screen()
	if strings.Contains(scr, "▸ rabbit") || strings.Contains(scr, "online") {
		t.Errorf("single node: node facts on the info line:\n%s", scr)
	}
	if !strings.Contains(scr, "1 parking lot(s) (P) · depth refreshes every 2s") {
		t.Errorf("single node: info line changed:\n%s", scr)
	}
}

// Until the backend knows the node the status bar shows the URL(s) it was
// given, as before clusters.
func TestClusterNodeNotKnownYet(t *testing.T) {
	fb := newFakeBackend(t.TempDir())
	seedDemo(fb)
	fb.cluster = Cluster{Conn: replay.ConnNode{URL: "amqp://guest:xxxxx@127.0.0.1:5672/"}}
	hs := newHarness(t, fb, "", 100, 20)
	hs.untilScreen("1 parking lot(s)")
	if scr := hs.screen(); !strings.Contains(scr, " amqp://guest:xxxxx@127.0.0.1:5672/ vhost /") {
		t.Errorf("status bar:\n%s", scr)
	}
}
