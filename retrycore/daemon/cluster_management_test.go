//go:build cluster && integration

package daemon

import (
	"context"
	"errors"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/broker/brokertest/clustertest"
	"github.com/parkinglot/parkinglot/retrycore"
	"github.com/parkinglot/parkinglot/retrycore/retrytest"
)

// TestClusterDaemonManagementMismatch: the loop holds each connection it
// opens against the management check it was given; a check of the system
// broker's management API (15672) with the loop's URL on the cluster's
// node 1 stops the loop at once with ErrManagementMismatch, before it
// declares anything (no node is stopped).
func TestClusterDaemonManagementMismatch(t *testing.T) {
	clustertest.UseCluster(t) // starts the cluster if a node does not answer; stops nothing
	const node1 = "amqp://guest:guest@127.0.0.1:5681/"
	m, err := broker.NewManagement("http://guest:guest@127.0.0.1:15672", "/")
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	check := broker.StartManagementCheck(ctx, m, broker.Options{URL: "amqp://guest:guest@127.0.0.1:5672/"})
	p := retrytest.Pipeline(t, retrycore.QueueClassic, time.Second)
	err = Run(ctx, RunOptions{Pipeline: p, Broker: broker.Options{URL: node1}, Management: m, ManagementCheck: check}, HandlerFunc(func(context.Context, Delivery) error { return nil }))
	var mm *broker.ManagementMismatchError
	if !errors.Is(err, broker.ErrManagementMismatch) || !errors.As(err, &mm) || mm.AMQPCluster != "rabbitc1@vm" || mm.ManagementCluster != "rabbit@vm" {
		t.Fatalf("Run: %v, want the mismatch of node 1 (rabbitc1@vm) and the system broker (rabbit@vm)", err)
	}
	conn, err := amqp.Dial(node1)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ch.QueueDeclarePassive(p.Main.Queue, true, false, false, false, nil); err == nil {
		t.Errorf("the refused loop declared %s on the cluster", p.Main.Queue)
		_, _ = ch.QueueDelete(p.Main.Queue, false, false, false)
	}
}
