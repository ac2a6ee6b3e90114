//go:build integration

package broker_test

import (
	"context"
	"net"
	"net/url"
	"testing"
	"time"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/broker/brokertest"
)

// ListenerNode against the broker under test: its own listeners name its
// node at once; made-up listeners of a cluster show how a port shared by
// several nodes is settled by the URL's host, or not at all.
func TestListenerNode(t *testing.T) {
	c := brokertest.Dial(t, "parkinglot test listener node")
	m := brokertest.Management(t)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	ls, err := m.Listeners(ctx)
	if err != nil {
		t.Fatal(err)
	}
	nodes, err := m.Nodes(ctx)
	if err != nil || len(nodes) == 0 || !nodes[0].Running || nodes[0].Trouble() {
		t.Fatalf("nodes: %+v, %v", nodes, err)
	}
	if got := broker.ListenerNode(ls, c); got != nodes[0].Name {
		t.Errorf("ListenerNode = %q, want %q (listeners %+v)", got, nodes[0].Name, ls)
	}

	port := c.RemoteAddr().(*net.TCPAddr).Port
	shared := []broker.Listener{
		{Node: "rabbit@other", Protocol: "amqp", IPAddress: "::", Port: port},
		{Node: "rabbit@" + hostOf(t, c.URL), Protocol: "amqp", IPAddress: "::", Port: port},
		{Node: "rabbit@third", Protocol: "http", IPAddress: "::", Port: port},        // not AMQP
		{Node: "rabbit@fourth", Protocol: "amqp", IPAddress: "10.9.9.9", Port: port}, // another address
	}
	if got, want := broker.ListenerNode(shared, c), "rabbit@"+hostOf(t, c.URL); got != want {
		t.Errorf("shared port, one node named for the URL's host: %q, want %q", got, want)
	}
	if got := broker.ListenerNode(shared[:1:1], c); got != "rabbit@other" {
		t.Errorf("one listener on all addresses: %q", got)
	}
	ambiguous := []broker.Listener{
		{Node: "rabbit@a", Protocol: "amqp", IPAddress: "::", Port: port},
		{Node: "rabbit@b", Protocol: "amqp", IPAddress: "::", Port: port},
	}
	if got := broker.ListenerNode(ambiguous, c); got != "" {
		t.Errorf("two nodes on the port, neither named for the host: %q, want \"\" (the connection listing decides)", got)
	}
}

func hostOf(t *testing.T, redacted string) string {
	t.Helper()
	u, err := url.Parse(redacted)
	if err != nil {
		t.Fatalf("parse %q: %v", redacted, err)
	}
	return u.Hostname()
}
