package replay_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/replay"
)

// The queue shapes the management API of RabbitMQ 4.3.6 gave on the
// three-node cluster of `make cluster`, with no node, one and two nodes
// stopped (leader keeps naming the stopped leader in a minority).
var (
	c1, c2, c3 = "rabbitc1@localhost", "rabbitc2@localhost", "rabbitc3@localhost"
	all        = []string{c1, c2, c3}

	quorumWell     = broker.QueueInfo{Name: "q.dlq", Type: "quorum", State: "running", Node: c3, Leader: c3, Members: all, Online: all}
	quorumOneDown  = broker.QueueInfo{Name: "q.dlq", Type: "quorum", State: "running", Node: c2, Leader: c2, Members: all, Online: []string{c1, c2}}
	quorumMinority = broker.QueueInfo{Name: "q.dlq", Type: "quorum", State: "minority", Node: c2, Leader: c2, Members: all, Online: []string{c1}}
	classicWell    = broker.QueueInfo{Name: "c", Type: "classic", State: "running", Node: c3}
	classicDown    = broker.QueueInfo{Name: "c", Type: "classic", State: "down", Node: c3}
	single         = broker.QueueInfo{Name: "s", Type: "quorum", State: "running", Node: "rabbit@h", Leader: "rabbit@h", Members: []string{"rabbit@h"}, Online: []string{"rabbit@h"}}
)

func TestPlacementAndUnavailable(t *testing.T) {
	name := replay.NodeNamer(all)
	for _, tc := range []struct {
		q           broker.QueueInfo
		parkingLot  bool
		placement   string
		offline     []string
		unavailable string // a prefix; "" for none
	}{
		{quorumWell, true, "leader rabbitc3, 3/3 online", nil, ""},
		{quorumOneDown, true, "leader rabbitc2, 2/3 online", []string{c3}, ""},
		{quorumMinority, true, "no leader, 1/3 online", []string{c2, c3},
			"no leader: 2 of 3 members down (rabbitc2, rabbitc3); messages are safe but cannot be read or replayed until a majority is back"},
		{quorumMinority, false, "no leader, 1/3 online", []string{c2, c3},
			"no leader: 2 of 3 members down (rabbitc2, rabbitc3); messages are safe but cannot be consumed from or published to until a majority is back"},
		{broker.QueueInfo{Type: "quorum", State: "running", Members: all, Online: all}, true, "no leader, 3/3 online", nil, "no leader elected yet (3/3 members online)"},
		{classicWell, false, "rabbitc3", nil, ""},
		{classicDown, true, "rabbitc3 (down)", []string{c3}, "home node rabbitc3 is down: a classic queue lives on that one node; its messages cannot be read or replayed until it is back"},
		{single, false, "leader rabbit@h, 1/1 online", nil, ""},
		{broker.QueueInfo{Type: "classic"}, false, "", nil, ""}, // an API that does not say
	} {
		if got := replay.Placement(tc.q, name); got != tc.placement {
			t.Errorf("%+v: placement %q, want %q", tc.q, got, tc.placement)
		}
		if got := replay.Offline(tc.q); !slices.Equal(got, tc.offline) {
			t.Errorf("%+v: offline %q, want %q", tc.q, got, tc.offline)
		}
		got := replay.Unavailable(tc.q, tc.parkingLot, name)
		if (tc.unavailable == "") != (got == "") || !strings.HasPrefix(got, tc.unavailable) {
			t.Errorf("%+v: unavailable %q, want %q", tc.q, got, tc.unavailable)
		}
	}
	// Without a namer the words name the nodes in full (-o json).
	if got := replay.Unavailable(quorumMinority, true, nil); !strings.Contains(got, "(rabbitc2@localhost, rabbitc3@localhost)") {
		t.Errorf("full names: %q", got)
	}
}

func TestNodeNamer(t *testing.T) {
	for _, tc := range []struct {
		nodes []string
		in    string
		want  string
	}{
		{all, c2, "rabbitc2"}, // one host: the node names
		{[]string{"rabbit@h1", "rabbit@h2"}, "rabbit@h2", "h2"},                // one name: the hosts
		{[]string{"a@h1", "b@h2"}, "b@h2", "b@h2"},                             // neither: whole
		{[]string{"rabbit@localhost"}, "rabbit@localhost", "rabbit@localhost"}, // a single node: whole
	} {
		if got := replay.NodeNamer(tc.nodes)(tc.in); got != tc.want {
			t.Errorf("NodeNamer(%q)(%q) = %q, want %q", tc.nodes, tc.in, got, tc.want)
		}
	}
}

func TestNodeTrouble(t *testing.T) {
	nodes := []broker.NodeInfo{
		{Name: c1, Running: true, MemAlarm: true},
		{Name: c2, Running: true, DiskFreeAlarm: true, Partitions: []string{c3}},
		{Name: c3},
	}
	got := replay.NodeTrouble(nodes, replay.NodeNamer(replay.NodeNames(nodes)))
	want := []string{"rabbitc1 memory alarm", "rabbitc2 disk alarm, cannot reach rabbitc3", "rabbitc3 down"}
	if !slices.Equal(got, want) {
		t.Errorf("NodeTrouble = %q, want %q", got, want)
	}
	if got := replay.NodeTrouble([]broker.NodeInfo{{Name: c1, Running: true}}, nil); got != nil {
		t.Errorf("a well node: %q", got)
	}
}

// The management API may still list a stopped node's replica as online
// (measured: one quorum queue 2/3, another 3/3, seconds after the stop);
// /api/nodes says at once.
func TestReconcile(t *testing.T) {
	nodes := []broker.NodeInfo{{Name: c1, Running: true}, {Name: c2, Running: true}, {Name: c3}}
	r := replay.ReconcileRow(replay.QueueRow{QueueInfo: quorumWell, ParkingLot: true}, nodes)
	if got := replay.Placement(r.QueueInfo, replay.NodeNamer(all)); got != "no leader, 2/3 online" {
		t.Errorf("stale 3/3 with the leader's node stopped: %q", got) // the leader was rabbitc3
	}
	if !slices.Equal(r.Offline, []string{c3}) || !strings.HasPrefix(r.Unavailable, "no leader elected yet (2/3 members online)") {
		t.Errorf("offline %q, unavailable %q", r.Offline, r.Unavailable)
	}
	r = replay.ReconcileRow(replay.QueueRow{QueueInfo: classicWell}, nodes)
	if r.State != "down" || !strings.HasPrefix(r.Unavailable, "home node rabbitc3@localhost is down") {
		t.Errorf("classic on a stopped node: %+v", r)
	}
	if got := replay.Reconcile(quorumOneDown, nil); !slices.Equal(got.Online, quorumOneDown.Online) {
		t.Errorf("without nodes: %+v", got)
	}
}
