package replay

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/parkinglot/parkinglot/broker"
)

// Where queues live on a cluster (package doc, "Clusters"). A quorum queue is
// replicated on its members and served by an elected leader, which needs a
// majority of the members online; without one its messages stay safe on
// disk but nothing can be read from or published to it (RabbitMQ's
// "Quorum Queues", "Availability"). A classic queue lives on one node, its
// home: while that node is down the queue cannot be used at all (RabbitMQ's
// "Clustering Guide", "Queue and Stream Leader Replica Placement"). The
// management API says so in each queue's members, online, leader, node and
// state ("minority" for a quorum queue without a majority, "down" for a
// classic queue whose node is down — measured on RabbitMQ 4.3.6, where
// leader keeps naming the stopped leader while the queue is in a minority).

// Offline lists a queue's replicas (a quorum queue's or a stream's members
// not online) or its home node (a classic queue whose state is "down")
// that cannot serve it now.
func Offline(q broker.QueueInfo) []string {
	if len(q.Members) > 0 {
		var out []string
		for _, m := range q.Members {
			if !slices.Contains(q.Online, m) {
				out = append(out, m)
			}
		}
		return out
	}
	if q.State == "down" && q.Node != "" {
		return []string{q.Node}
	}
	return nil
}

// NoLeader reports a replicated queue (quorum) without a leader that can
// serve it: fewer than a majority of its members online, the state
// "minority", or no leader among the online members.
func NoLeader(q broker.QueueInfo) bool {
	if q.Type != "quorum" || len(q.Members) == 0 {
		return false
	}
	return q.State == "minority" || len(q.Online) < len(q.Members)/2+1 || q.Leader == "" || !slices.Contains(q.Online, q.Leader)
}

// Unavailable says in words why a queue cannot be used now — a quorum
// queue without a leader, a classic queue whose home node is down — or ""
// when it can. Node names go through name (NodeNamer; nil keeps them).
func Unavailable(q broker.QueueInfo, parkingLot bool, name func(string) string) string {
	if name == nil {
		name = func(s string) string { return s }
	}
	cannot := "cannot be consumed from or published to"
	if parkingLot {
		cannot = "cannot be read or replayed"
	}
	off := Offline(q)
	names := make([]string, len(off))
	for i, n := range off {
		names[i] = name(n)
	}
	switch {
	case NoLeader(q) && len(q.Online) < len(q.Members)/2+1:
		return fmt.Sprintf("no leader: %d of %d members down (%s); messages are safe but %s until a majority is back",
			len(off), len(q.Members), strings.Join(names, ", "), cannot)
	case NoLeader(q):
		return fmt.Sprintf("no leader elected yet (%d/%d members online); messages are safe but %s until one is", len(q.Online), len(q.Members), cannot)
	case q.Type != "quorum" && len(q.Members) == 0 && q.State == "down" && q.Node != "":
		return fmt.Sprintf("home node %s is down: a %s queue lives on that one node; its messages %s until it is back", name(q.Node), q.Type, cannot)
	}
	return ""
}

// Placement is where a queue is served from, in a few words for a column:
// "leader rabbitc1, 2/3 online" or "no leader, 1/3 online" for a replicated
// queue, "rabbitc3" or "rabbitc3 (down)" for a classic queue; "" when the
// management API does not say.
func Placement(q broker.QueueInfo, name func(string) string) string {
	if name == nil {
		name = func(s string) string { return s }
	}
	if len(q.Members) > 0 {
		online := fmt.Sprintf("%d/%d online", len(q.Online), len(q.Members))
		if NoLeader(q) || q.Leader == "" {
			return "no leader, " + online
		}
		return "leader " + name(q.Leader) + ", " + online
	}
	if q.Node == "" {
		return ""
	}
	if q.State == "down" {
		return name(q.Node) + " (down)"
	}
	return name(q.Node)
}

// NodeNamer shortens node names for display when the cluster's names
// allow it: "rabbitc1@localhost" → "rabbitc1" when every node named shares
// its host part, "rabbit@host1" → "host1" when every node shares its name
// part; otherwise names stay whole.
func NodeNamer(lists ...[]string) func(string) string {
	var all []string
	for _, l := range lists {
		for _, n := range l {
			if n != "" && !slices.Contains(all, n) {
				all = append(all, n)
			}
		}
	}
	whole := func(s string) string { return s }
	if len(all) < 2 {
		return whole
	}
	name0, host0, ok := strings.Cut(all[0], "@")
	if !ok {
		return whole
	}
	sameHost, sameName := true, true
	for _, n := range all[1:] {
		nm, h, ok := strings.Cut(n, "@")
		if !ok {
			return whole
		}
		sameHost = sameHost && h == host0
		sameName = sameName && nm == name0
	}
	switch {
	case sameHost:
		return func(s string) string {
			if nm, h, ok := strings.Cut(s, "@"); ok && h == host0 {
				return nm
			}
			return s
		}
	case sameName:
		return func(s string) string {
			if nm, h, ok := strings.Cut(s, "@"); ok && nm == name0 {
				return h
			}
			return s
		}
	}
	return whole
}

// NodeTrouble is the cluster's nodes that are down, in a memory or disk
// alarm, or partitioned, in words, one entry per node: "rabbitc3@localhost
// down", "rabbitc1@localhost memory alarm, disk alarm". Nil when every
// node is well.
func NodeTrouble(nodes []broker.NodeInfo, name func(string) string) []string {
	if name == nil {
		name = func(s string) string { return s }
	}
	var out []string
	for _, n := range nodes {
		if !n.Trouble() {
			continue
		}
		var what []string
		if !n.Running {
			what = append(what, "down")
		}
		if n.MemAlarm {
			what = append(what, "memory alarm")
		}
		if n.DiskFreeAlarm {
			what = append(what, "disk alarm")
		}
		if len(n.Partitions) > 0 {
			ps := make([]string, len(n.Partitions))
			for i, p := range n.Partitions {
				ps[i] = name(p)
			}
			what = append(what, "cannot reach "+strings.Join(ps, ", "))
		}
		out = append(out, name(n.Name)+" "+strings.Join(what, ", "))
	}
	return out
}

// NodeNames are the names of nodes.
func NodeNames(nodes []broker.NodeInfo) []string {
	out := make([]string, len(nodes))
	for i, n := range nodes {
		out[i] = n.Name
	}
	return out
}

// Nodes lists the cluster's nodes from the management API (one on a single
// broker).
func (s *Session) Nodes(ctx context.Context) ([]broker.NodeInfo, error) {
	m, err := s.Management(ctx)
	if err != nil {
		return nil, err
	}
	return m.Nodes(ctx)
}

// ConnNode is the node the session's connection is on.
type ConnNode struct {
	// URL is the redacted URL the connection was made to (one of a
	// cluster's list).
	URL string `json:"url"`
	// Node is the RabbitMQ node, "" while not known.
	Node string `json:"node,omitempty"`
	// Describe is URL with the context and vhost, as Session.Describe
	// says them, for status bars.
	Describe string `json:"-"`
}

// nodeLookup bounds the background lookup of a connection's node in the
// management API's connection listing, which lists a new connection only
// after its first statistics (4–5 s on this machine, measured).
const nodeLookup = 6 * time.Second

// connNodes caches which node each connection is on, by connection id.
type connNodes struct {
	mu      sync.Mutex
	known   map[string]string        // connection id → node
	pending map[string]chan struct{} // closed when the lookup ends
}

// ConnectionNode says which node the session's consuming connection is on.
// The cluster's AMQP listeners (one management request) tell at once when
// each node has its own address or port, or host name; otherwise the
// management API's connection listing is asked once per connection, in the
// background, for up to 6 s. ConnectionNode waits for that only while ctx
// lasts, and returns Node "" (and no error) while the answer is pending;
// later calls return it from the cache. The error is the management API's
// when it cannot be asked.
func (s *Session) ConnectionNode(ctx context.Context) (ConnNode, error) {
	s.mu.Lock()
	c := s.consume
	s.mu.Unlock()
	if c == nil {
		return ConnNode{}, errSessionClosed
	}
	out := ConnNode{URL: c.URL, Describe: s.describeURL(c.URL)}
	cache := &s.nodes
	cache.mu.Lock()
	if n, ok := cache.known[c.ID]; ok {
		cache.mu.Unlock()
		out.Node = n
		return out, nil
	}
	done, running := cache.pending[c.ID]
	cache.mu.Unlock()
	if !running {
		m, err := s.Management(ctx)
		if err != nil {
			return out, err
		}
		if ls, err := m.Listeners(ctx); err == nil {
			if n := broker.ListenerNode(ls, c); n != "" {
				s.nodes.set(c.ID, n)
				out.Node = n
				return out, nil
			}
		}
		done = cache.start(c.ID, func() string {
			lctx, cancel := context.WithTimeout(context.Background(), nodeLookup)
			defer cancel()
			n, _ := m.NodeOf(lctx, c)
			return n
		})
	}
	select {
	case <-done:
		cache.mu.Lock()
		out.Node = cache.known[c.ID]
		cache.mu.Unlock()
	case <-ctx.Done():
	}
	return out, nil
}

func (n *connNodes) set(id, node string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.known == nil {
		n.known = map[string]string{}
	}
	n.known[id] = node
}

// start runs lookup for connection id in the background unless one runs
// already, and returns the channel closed when it ends. A lookup that
// finds nothing is not cached: a later call asks again.
func (n *connNodes) start(id string, lookup func() string) chan struct{} {
	n.mu.Lock()
	defer n.mu.Unlock()
	if ch, ok := n.pending[id]; ok {
		return ch
	}
	if n.pending == nil {
		n.pending = map[string]chan struct{}{}
	}
	ch := make(chan struct{})
	n.pending[id] = ch
	go func() {
		node := lookup()
		n.mu.Lock()
		if node != "" {
			if n.known == nil {
				n.known = map[string]string{}
			}
			n.known[id] = node
		}
		delete(n.pending, id)
		n.mu.Unlock()
		close(ch)
	}()
	return ch
}

// describeURL is Describe with one URL of the list: the one in use.
func (s *Session) describeURL(redacted string) string {
	d := redacted + " vhost " + s.vhost()
	if s.conn.Context != "" {
		d = s.conn.Context + ": " + d
	}
	return d
}

// Reconcile corrects q with the cluster's nodes: the management API
// updates each queue's online members and state from its statistics, a
// few seconds after a node stops (and not for every queue at once), while
// /api/nodes says at once that the node is not running. A member on a node
// not running is taken off Online, and a classic queue whose node is not
// running is "down".
func Reconcile(q broker.QueueInfo, nodes []broker.NodeInfo) broker.QueueInfo {
	stopped := map[string]bool{}
	for _, n := range nodes {
		if !n.Running {
			stopped[n.Name] = true
		}
	}
	if len(stopped) == 0 {
		return q
	}
	if len(q.Members) > 0 {
		online := make([]string, 0, len(q.Online))
		for _, m := range q.Online {
			if !stopped[m] {
				online = append(online, m)
			}
		}
		q.Online = online
		return q
	}
	if q.Node != "" && stopped[q.Node] {
		q.State = "down"
	}
	return q
}

// ReconcileRow is Reconcile on a row, with its Offline and Unavailable
// said again.
func ReconcileRow(r QueueRow, nodes []broker.NodeInfo) QueueRow {
	r.QueueInfo = Reconcile(r.QueueInfo, nodes)
	r.Offline, r.Unavailable = Offline(r.QueueInfo), Unavailable(r.QueueInfo, r.ParkingLot, nil)
	return r
}
