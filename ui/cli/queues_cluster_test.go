//go:build cluster && integration

package cli_test

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/broker/brokertest"
	"github.com/parkinglot/parkinglot/broker/brokertest/clustertest"
	"github.com/parkinglot/parkinglot/ui/cli/clitest"
)

// TestClusterQueues runs `queues` (the binary, --url and --management-url
// listing the three nodes of `make cluster`) on a quorum parking lot and a
// classic queue: it names the node its connection is on, the quorum
// queue's leader and members, all online; then, with one node stopped (not
// the leader; the classic queue's home), it says 2/3 online, names the
// stopped node on the nodes line and in -o json, and says in words that
// the classic queue cannot be used until its node is back.
func TestClusterQueues(t *testing.T) {
	clustertest.UseCluster(t)
	m := clustertest.ClusterManagement(t)
	ch := brokertest.Channel(t)
	lot := brokertest.Name(t, "dlq")
	brokertest.DeclareQueue(t, ch, lot, amqp.Table{"x-queue-type": "quorum"})
	leader := clustertest.QueueLeader(t, m, lot).Leader
	var down clustertest.ClusterNode
	for _, n := range clustertest.ClusterNodes() {
		if n.Node != leader {
			down = n
		}
	}
	// A classic queue lives on the node of the connection that declares it
	// (RabbitMQ's default queue locator, client-local).
	classic := brokertest.Name(t, "classic")
	declareOn(t, down, classic)
	waitQueue(t, m, lot, func(q broker.QueueInfo) bool { return len(q.Online) == 3 })

	c := clitest.NewCLI(t)
	r := c.Run("", "queues")
	if r.Code != 0 {
		t.Fatalf("queues: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	first := strings.SplitN(r.Stdout, "\n", 2)[0]
	if m := regexp.MustCompile(`^connected to rabbitc(\d)@localhost \(amqp://guest:xxxxx@127\.0\.0\.1:568(\d)/\)$`).FindStringSubmatch(first); m == nil || m[1] != m[2] {
		t.Errorf("first line %q: want the node and the URL of the same node", first)
	}
	short := strings.TrimSuffix(leader, "@localhost")
	if row := rowOf(r.Stdout, lot); !strings.Contains(row, "leader "+short+", 3/3 online") {
		t.Errorf("quorum parking lot's row %q: want its leader %s, 3/3 online\n%s", row, short, r.Stdout)
	}
	if row := rowOf(r.Stdout, classic); !strings.Contains(row, strings.TrimSuffix(down.Node, "@localhost")) {
		t.Errorf("classic queue's row %q: want its node %s", row, down.Node)
	}
	row := jsonRow(t, c, lot)
	if row.Leader != leader || len(row.Members) != 3 || len(row.Online) != 3 || len(row.Offline) != 0 || row.ConnectedTo.Node == "" {
		t.Errorf("-o json: %+v", row)
	}

	t.Logf("stopping %s (%s); the leader is %s", down.Name, down.Node, leader)
	clustertest.StopNode(t, down)
	downShort := strings.TrimSuffix(down.Node, "@localhost")
	brokertest.Eventually(t, 60*time.Second, 500*time.Millisecond, func() bool { // the management API's view of the stopped node
		r = c.Run("", "queues")
		return r.Code == 0 && strings.Contains(rowOf(r.Stdout, lot), "2/3 online") && strings.Contains(rowOf(r.Stdout, classic), "(down)")
	}, func() string {
		return fmt.Sprintf("queues never said 2/3 online and the classic queue's node down (exit %d):\n%s%s", r.Code, r.Stdout, r.Stderr)
	})
	t.Logf("queues with %s stopped:\n%s", down.Node, r.Stdout)
	if !strings.Contains(r.Stdout, "\nnodes: "+downShort+" down (2 of 3 running)\n") {
		t.Errorf("no nodes line naming %s down:\n%s", downShort, r.Stdout)
	}
	if !strings.Contains(r.Stdout, "\n"+classic+": home node "+downShort+" is down") {
		t.Errorf("the classic queue's home node down is not said in words:\n%s", r.Stdout)
	}
	if strings.Contains(r.Stdout, "\n"+lot+": ") {
		t.Errorf("the quorum parking lot kept its majority but is said to be unavailable:\n%s", r.Stdout)
	}
	row = jsonRow(t, c, lot)
	if !slices.Equal(row.Offline, []string{down.Node}) || len(row.Online) != 2 || row.Unavailable != "" {
		t.Errorf("-o json with %s stopped: %+v", down.Node, row)
	}
	if n, ok := row.Nodes[down.Node]; !ok || n.Running {
		t.Errorf("-o json nodes: %+v, want %s not running", row.Nodes, down.Node)
	}
}

// declareOn declares a durable classic queue through a connection to node
// n, deleted at the end of the test.
func declareOn(t *testing.T, n clustertest.ClusterNode, name string) {
	t.Helper()
	conn, err := amqp.Dial(n.AMQP)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ch.QueueDeclare(name, true, false, false, false, amqp.Table{"x-queue-type": "classic"}); err != nil {
		t.Fatal(err)
	}
	brokertest.DeleteQueueAtEnd(t, name)
}

func waitQueue(t *testing.T, m *broker.Management, name string, ok func(broker.QueueInfo) bool) {
	t.Helper()
	var q broker.QueueInfo
	var err error
	brokertest.Eventually(t, 60*time.Second, 250*time.Millisecond, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		q, err = m.Queue(ctx, name)
		return err == nil && ok(q)
	}, func() string { return fmt.Sprintf("queue %s: %+v, %v", name, q, err) })
}

// rowOf is the table row of queue in `queues` text output.
func rowOf(out, queue string) string {
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		if slices.Contains(f, queue) && !strings.HasPrefix(l, queue+":") {
			return l
		}
	}
	return ""
}

type queueLine struct {
	Name        string   `json:"name"`
	Leader      string   `json:"leader"`
	Members     []string `json:"members"`
	Online      []string `json:"online"`
	Offline     []string `json:"offline"`
	Unavailable string   `json:"unavailable"`
	ConnectedTo struct {
		Node string `json:"node"`
	} `json:"connected_to"`
	Nodes map[string]broker.NodeInfo `json:"nodes"`
}

// jsonRow is queue's line of `queues -o json`.
func jsonRow(t *testing.T, c *clitest.CLI, queue string) queueLine {
	t.Helper()
	r := c.Run("", "-o", "json", "queues")
	if r.Code != 0 {
		t.Fatalf("queues -o json: exit %d\n%s", r.Code, r.Stderr)
	}
	for _, l := range strings.Split(strings.TrimSpace(r.Stdout), "\n") {
		var q queueLine
		if err := json.Unmarshal([]byte(l), &q); err != nil {
			t.Fatalf("queues -o json line %q: %v", l, err)
		}
		if q.Name == queue {
			return q
		}
	}
	t.Fatalf("queues -o json has no line for %s:\n%s", queue, r.Stdout)
	return queueLine{}
}
