package broker

import (
	"context"
	"net"
	"net/http"
	"strconv"
	"strings"
)

// NodeInfo is one node of the cluster as the management API's /api/nodes
// reports it. A stopped node is listed with running false and nothing
// else.
type NodeInfo struct {
	Name          string   `json:"name"`
	Running       bool     `json:"running"`
	MemAlarm      bool     `json:"mem_alarm"`
	DiskFreeAlarm bool     `json:"disk_free_alarm"`
	Partitions    []string `json:"partitions"` // nodes this one cannot reach
}

// Trouble reports a node that is down, in a resource alarm (publishers
// are blocked: RabbitMQ's "Memory and Disk Alarms") or partitioned.
func (n NodeInfo) Trouble() bool {
	return !n.Running || n.MemAlarm || n.DiskFreeAlarm || len(n.Partitions) > 0
}

// Nodes lists the cluster's nodes (one on a single broker).
func (m *Management) Nodes(ctx context.Context) ([]NodeInfo, error) {
	var ns []NodeInfo
	err := m.do(ctx, http.MethodGet, "/nodes?columns=name,running,mem_alarm,disk_free_alarm,partitions", nil, &ns)
	return ns, err
}

// Listener is one of the cluster's listeners, as /api/overview lists them
// (every running node's).
type Listener struct {
	Node      string `json:"node"`
	Protocol  string `json:"protocol"` // amqp, amqp/ssl, http, clustering, …
	IPAddress string `json:"ip_address"`
	Port      int    `json:"port"`
}

// Listeners lists every running node's listeners (/api/overview's).
func (m *Management) Listeners(ctx context.Context) ([]Listener, error) {
	var o Overview
	err := m.do(ctx, http.MethodGet, "/overview?columns=listeners", nil, &o)
	return o.Listeners, err
}

// ListenerNode says which node c is on from the cluster's AMQP listeners,
// without waiting for the management API to list the connection: the node
// whose listener has the port c is connected to, on c's address or on all
// addresses. When several nodes listen on that port (nodes on different
// hosts, each on 5672), the node whose host part ("rabbit@HOST") is c's
// URL host, or its first DNS label, is taken. "" when that does not tell
// one node: Management.NodeOf then asks the connection listing.
func ListenerNode(listeners []Listener, c *Conn) string {
	if c == nil || c.Connection == nil {
		return ""
	}
	addr, ok := c.RemoteAddr().(*net.TCPAddr)
	if !ok {
		return ""
	}
	var nodes []string
	seen := map[string]bool{}
	for _, l := range listeners {
		if !strings.HasPrefix(l.Protocol, "amqp") || l.Port != addr.Port || seen[l.Node] {
			continue
		}
		ip := net.ParseIP(l.IPAddress)
		if ip != nil && !ip.IsUnspecified() && !ip.Equal(addr.IP) {
			continue
		}
		seen[l.Node] = true
		nodes = append(nodes, l.Node)
	}
	if len(nodes) == 1 {
		return nodes[0]
	}
	host := urlHost(c.URL)
	if host == "" {
		return ""
	}
	var byHost []string
	for _, n := range nodes {
		_, h, ok := strings.Cut(n, "@")
		if ok && (strings.EqualFold(h, host) || strings.EqualFold(firstLabel(h), firstLabel(host))) {
			byHost = append(byHost, n)
		}
	}
	if len(byHost) == 1 {
		return byHost[0]
	}
	return ""
}

// urlHost is the host of an AMQP URL (redacted or not), "" when it has none.
func urlHost(raw string) string {
	_, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return ""
	}
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		rest = rest[:i]
	}
	if i := strings.LastIndex(rest, "@"); i >= 0 {
		rest = rest[i+1:]
	}
	if h, p, err := net.SplitHostPort(rest); err == nil {
		if _, err := strconv.Atoi(p); err == nil {
			return h
		}
	}
	return strings.Trim(rest, "[]")
}

func firstLabel(host string) string {
	if net.ParseIP(host) != nil {
		return host
	}
	l, _, _ := strings.Cut(host, ".")
	return l
}
