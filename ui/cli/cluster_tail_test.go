//go:build cluster && integration

package cli_test

import (
	"context"
	"strings"
	"syscall"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker/brokertest"
	"github.com/parkinglot/parkinglot/broker/brokertest/clustertest"
	"github.com/parkinglot/parkinglot/ui/cli/clitest"
)

// TestClusterTailFollowsTheNodeThatAnswers: on the three-node cluster, the
// node a `tail` is connected to stops; the tail re-dials another, taps the
// lot again, says what it missed (the gap), and shows what arrives after.
// The lot (quorum) keeps every message, none consumed.
func TestClusterTailFollowsTheNodeThatAnswers(t *testing.T) {
	clustertest.UseCluster(t)
	m := clustertest.ClusterManagement(t)
	ch := brokertest.Channel(t)
	dlx, lot, work := brokertest.Name(t, "dlx"), brokertest.Name(t, "lot"), brokertest.Name(t, "work")
	brokertest.DeclareExchange(t, ch, dlx, "fanout")
	brokertest.DeclareQueue(t, ch, lot, quorumArgs)
	if err := ch.QueueBind(lot, "", dlx, false, nil); err != nil {
		t.Fatal(err)
	}
	brokertest.DeclareQueue(t, ch, work, amqp.Table{"x-queue-type": "quorum", "x-dead-letter-exchange": dlx})
	park := func(ch *amqp.Channel, id string) {
		brokertest.Publish(t, ch, "", work, amqp.Publishing{MessageId: id, Body: []byte(`{}`), Headers: amqp.Table{"x-last-error": "ledger down"}})
		if err := brokertest.MustGet(t, ch, work).Reject(false); err != nil {
			t.Fatal(err)
		}
	}

	connName := "parkinglot-tail " + brokertest.Name(t, "")
	c := clitest.NewCLI(t, "PARKINGLOT_CONNECTION_NAME="+connName)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := c.Command(ctx, "tail", lot, "-o", "json")
	stdout, _ := cmd.StdoutPipe()
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := &tailRun{cmd: cmd, lines: lines(stdout), errs: lines(stderr)}
	r.until(t, r.errs, "tailing "+lot)
	park(ch, "before-1")
	if l := r.next(t); !strings.Contains(l, "before-1") {
		t.Fatalf("first arrival: %s, want before-1", l)
	}

	var node string
	for _, n := range clustertest.ConnectionNodes(t, m, connName, 30*time.Second) {
		node = n
	}
	stopped := clustertest.ClusterNodeByNode(t, node)
	took := clustertest.StopNode(t, stopped)
	gap := r.until(t, r.errs, "tapped again at")
	ch = brokertest.Channel(t) // the first may have been on the stopped node
	park(ch, "after-1")
	if l := r.next(t); !strings.Contains(l, "after-1") {
		t.Fatalf("arrival after the node stop: %s, want after-1", l)
	}
	_ = cmd.Process.Signal(syscall.SIGINT)
	if err := cmd.Wait(); err != nil {
		t.Errorf("tail ended by Ctrl-C: %v, want exit 0", err)
	}
	if summary := r.rest(); !strings.Contains(summary, "2 arrived") {
		t.Errorf("the summary lacks \"2 arrived\":\n%s", summary)
	}
	brokertest.WaitDepth(t, lot, 2, 30*time.Second)
	brokertest.Figures(t, "cluster tail: its node %s stopped (%v), re-tapped: %s", node, took.Round(time.Millisecond),
		strings.TrimSpace(gap[strings.LastIndex(gap, "\n")+1:]))
	clustertest.StartNode(t, stopped)
}
