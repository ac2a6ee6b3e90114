package cli

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/replay"
)

// clusterView is `queues` on the three-node cluster with rabbitc3 stopped
// and rabbitc2 in a memory alarm, as the management API of RabbitMQ 4.3.6
// reports it (a quorum queue in a minority keeps naming its stopped
// leader).
func clusterView() QueuesView {
	c1, c2, c3 := "rabbitc1@localhost", "rabbitc2@localhost", "rabbitc3@localhost"
	all := []string{c1, c2, c3}
	row := func(q broker.QueueInfo, lot bool, why string) replay.QueueRow {
		return replay.QueueRow{QueueInfo: q, ParkingLot: lot, Why: why, Offline: replay.Offline(q), Unavailable: replay.Unavailable(q, lot, nil)}
	}
	return QueuesView{
		Conn: replay.ConnNode{URL: "amqp://guest:xxxxx@127.0.0.1:5682/", Node: c2},
		Nodes: []broker.NodeInfo{
			{Name: c1, Running: true}, {Name: c2, Running: true, MemAlarm: true}, {Name: c3},
		},
		Rows: []replay.QueueRow{
			row(broker.QueueInfo{Name: "orders.dlq", Type: "quorum", State: "running", Leader: c1, Members: all, Online: []string{c1, c2}, Messages: 12, MessagesReady: 12}, true, "config"),
			row(broker.QueueInfo{Name: "pay.dlq", Type: "quorum", State: "minority", Leader: c3, Members: all, Online: []string{c1}, Messages: 3, MessagesReady: 3}, true, "name"),
			row(broker.QueueInfo{Name: "legacy.error", Type: "classic", State: "down", Node: c3}, true, "name"),
			row(broker.QueueInfo{Name: "orders", Type: "classic", State: "running", Node: c1, Consumers: 2}, false, ""),
		},
	}
}

func TestWriteQueuesCluster(t *testing.T) {
	var b bytes.Buffer
	if err := WriteQueues(&b, clusterView()); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	lines := strings.Split(strings.TrimSpace(out), "\n")
	for i, want := range []string{
		"connected to rabbitc2@localhost (amqp://guest:xxxxx@127.0.0.1:5682/)",
		"nodes: rabbitc2 memory alarm; rabbitc3 down (2 of 3 running)",
	} {
		if lines[i] != want {
			t.Errorf("line %d: %q, want %q\n%s", i+1, lines[i], want, out)
		}
	}
	for _, want := range []string{
		"CONSUMERS  NODES                        WHY",
		"orders.dlq    quorum   12        12     0        0          leader rabbitc1, 2/3 online  config",
		"pay.dlq       quorum   3         3      0        0          no leader, 1/3 online        name",
		"legacy.error  classic  0         0      0        0          rabbitc3 (down)              name",
		"orders        classic  0         0      0        2          rabbitc1",
		"pay.dlq: no leader: 2 of 3 members down (rabbitc2, rabbitc3); messages are safe but cannot be read or replayed until a majority is back",
		"legacy.error: home node rabbitc3 is down: a classic queue lives on that one node; its messages cannot be read or replayed until it is back",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("queues lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "orders.dlq:") {
		t.Errorf("a quorum queue with a majority is said to be unavailable:\n%s", out)
	}
}

// On a single broker the table keeps its columns: only the connected line
// is new.
func TestWriteQueuesSingleNode(t *testing.T) {
	var b bytes.Buffer
	v := QueuesView{
		Conn:  replay.ConnNode{URL: "amqp://guest:xxxxx@localhost:5672/", Node: "rabbit@localhost"},
		Nodes: []broker.NodeInfo{{Name: "rabbit@localhost", Running: true}},
		Rows: []replay.QueueRow{
			{QueueInfo: broker.QueueInfo{Name: "a.dlq", Type: "quorum", State: "running", Node: "rabbit@localhost", Leader: "rabbit@localhost",
				Members: []string{"rabbit@localhost"}, Online: []string{"rabbit@localhost"}, Messages: 4, MessagesReady: 4}, ParkingLot: true, Why: "name"},
		},
	}
	if err := WriteQueues(&b, v); err != nil {
		t.Fatal(err)
	}
	want := "connected to rabbit@localhost (amqp://guest:xxxxx@localhost:5672/)\n" +
		"   NAME   TYPE    MESSAGES  READY  UNACKED  CONSUMERS  WHY\n" +
		"*  a.dlq  quorum  4         4      0        0          name\n" +
		"* parking lot\n"
	if b.String() != want {
		t.Errorf("single node:\n%s\nwant:\n%s", b.String(), want)
	}
	// The node not known yet: the URL alone, and why.
	b.Reset()
	v.Conn.Node = ""
	if err := WriteQueues(&b, v); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(b.String(), "connected to amqp://guest:xxxxx@localhost:5672/ (node not known yet") {
		t.Errorf("node unknown:\n%s", b.String())
	}
}

func TestWriteQueuesJSONCluster(t *testing.T) {
	var b bytes.Buffer
	if err := WriteQueuesJSON(&b, clusterView()); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 4 {
		t.Fatalf("%d lines, want one per queue:\n%s", len(lines), b.String())
	}
	var row struct {
		Name        string   `json:"name"`
		ParkingLot  bool     `json:"parking_lot"`
		Why         string   `json:"why"`
		Messages    int64    `json:"messages"`
		Leader      string   `json:"leader"`
		Members     []string `json:"members"`
		Online      []string `json:"online"`
		Offline     []string `json:"offline"`
		Unavailable string   `json:"unavailable"`
		ConnectedTo struct {
			URL  string `json:"url"`
			Node string `json:"node"`
		} `json:"connected_to"`
		Nodes map[string]struct {
			Running  bool `json:"running"`
			MemAlarm bool `json:"mem_alarm"`
		} `json:"nodes"`
	}
	if err := json.Unmarshal([]byte(lines[1]), &row); err != nil {
		t.Fatal(err)
	}
	if row.Name != "pay.dlq" || !row.ParkingLot || row.Why != "name" || row.Messages != 3 || len(row.Members) != 3 || len(row.Online) != 1 {
		t.Errorf("existing fields: %+v", row)
	}
	if strings.Join(row.Offline, ",") != "rabbitc2@localhost,rabbitc3@localhost" ||
		!strings.HasPrefix(row.Unavailable, "no leader: 2 of 3 members down (rabbitc2@localhost, rabbitc3@localhost)") {
		t.Errorf("offline %q, unavailable %q", row.Offline, row.Unavailable)
	}
	if row.ConnectedTo.Node != "rabbitc2@localhost" || row.ConnectedTo.URL != "amqp://guest:xxxxx@127.0.0.1:5682/" {
		t.Errorf("connected_to: %+v", row.ConnectedTo)
	}
	if len(row.Nodes) != 2 || row.Nodes["rabbitc3@localhost"].Running || !row.Nodes["rabbitc2@localhost"].MemAlarm {
		t.Errorf("nodes: %+v", row.Nodes)
	}
	var tree any
	if err := json.Unmarshal([]byte(lines[0]), &tree); err != nil {
		t.Fatal(err)
	}
	checkKeys(t, "queues", tree)

	// All nodes well: no nodes object.
	v := clusterView()
	v.Nodes = []broker.NodeInfo{{Name: "a", Running: true}, {Name: "b", Running: true}}
	b.Reset()
	if err := WriteQueuesJSON(&b, v); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), `"nodes"`) {
		t.Errorf("nodes object while every node is well:\n%s", b.String())
	}
}
