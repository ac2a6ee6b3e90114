package broker

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
)

// Whether a management API belongs to the broker an AMQP connection is on.
//
// RabbitMQ's server properties carry no node name, only cluster_name; the
// management API's /api/overview gives, from one request, the cluster name
// the answering node reports, that node's name and every running node's
// listeners (so every running node's name); /api/cluster-name gives a
// node's cluster name alone, five times cheaper (measured: ~1 ms against
// ~7 ms for the overview on the 4.3 cluster). A cluster name someone set
// (rabbitmqctl set_cluster_name, or cluster_name in rabbitmq.conf) is the
// same on every node. An unset one is not: each node reports its own
// default, "<its node name's prefix>@<its host's name>" (measured on the
// RabbitMQ 4.3 cluster of make cluster: rabbitc1@vm, rabbitc2@vm,
// rabbitc3@vm for nodes rabbitc1@localhost …; 3.10.8 alike). So the AMQP
// side belongs to the management side when its cluster name is one a
// management node reports, or when it is a default name that points at one
// of the management API's nodes (see belongs); before a mismatch is called,
// the nodes are every member (/api/nodes), running or not, since a node
// that is stopping is missing from the overview. Two clusters that were
// given the same name cannot be told apart this way.

// ErrManagementMismatch marks a management API that belongs to another
// cluster than the AMQP connection (ManagementMismatchError).
var ErrManagementMismatch = errors.New("management API of another cluster")

// MismatchKind says what did not match.
type MismatchKind int

const (
	// MismatchPair: the connected AMQP broker is not in the management
	// API's cluster.
	MismatchPair MismatchKind = iota
	// MismatchAMQPList: the connected AMQP broker is, but another URL of
	// the AMQP list is not (the list spans two clusters).
	MismatchAMQPList
	// MismatchManagementList: the management URLs span two clusters.
	MismatchManagementList
)

// ManagementMismatchError is a management API and an AMQP connection (or
// two URLs of one list) that belong to different clusters. URLs are
// redacted. It matches ErrManagementMismatch.
type ManagementMismatchError struct {
	Kind MismatchKind
	// AMQP is the AMQP URL that does not belong, AMQPCluster its
	// cluster_name ("" if the broker sent none). For MismatchAMQPList,
	// Connected is the list's URL that does belong.
	AMQP, AMQPCluster, Connected string
	// Management is the management URL that answered, with the cluster
	// name it reports and the cluster's running nodes.
	Management        string
	ManagementCluster string
	ManagementNodes   []string
	// For MismatchManagementList, the management URL of another cluster
	// and the cluster name it reports.
	OtherManagement, OtherCluster string
}

func (e *ManagementMismatchError) Error() string {
	mgmt := fmt.Sprintf("%s (cluster %s, nodes %s)", e.Management, e.ManagementCluster, strings.Join(e.ManagementNodes, ", "))
	switch e.Kind {
	case MismatchManagementList:
		return fmt.Sprintf("the management URLs span two clusters: %s and %s (cluster %s)", mgmt, e.OtherManagement, e.OtherCluster)
	case MismatchAMQPList:
		return fmt.Sprintf("the AMQP URLs span two clusters: %s is in the cluster of the management API %s, %s (cluster %s) is not", e.Connected, mgmt, e.AMQP, e.AMQPCluster)
	}
	return fmt.Sprintf("%s (cluster %s) is not in the cluster of the management API %s", e.AMQP, e.AMQPCluster, mgmt)
}

func (e *ManagementMismatchError) Unwrap() error { return ErrManagementMismatch }

// ManagementFacts is what a management API says about its cluster.
type ManagementFacts struct {
	URL     string   // the URL that answered, without credentials
	Cluster string   // cluster_name as the answering node reports it
	Node    string   // the answering node
	Nodes   []string // every running node (the answering one included)
}

// listWait bounds the dial of each URL of an AMQP list that a check makes;
// answerGrace is how long, once the management API has answered, the
// check waits for those dials and for the other management URLs. What has
// not answered by then is not checked: a stopped or hung node must not
// hold every command up.
const (
	listWait    = 5 * time.Second
	answerGrace = 2 * time.Second
)

// CheckManagement checks that m belongs to the cluster c is connected to
// (see the comment above for the rule): StartManagementCheck, then
// Against c.
func CheckManagement(ctx context.Context, m *Management, c *Conn, opts Options) error {
	return StartManagementCheck(ctx, m, opts).Against(ctx, c)
}

// ManagementCheck is a management check begun before the connection it
// checks is open, so that its requests and dials overlap that dial.
type ManagementCheck struct {
	m     *Management
	done  chan struct{}
	facts ManagementFacts
	err   error
	// others is the cluster name of every other management URL that
	// answered; amqp every URL of an AMQP list that answered, with its
	// cluster name (none for one URL: the connection itself says).
	others []side
	amqp   []side
}

type side struct{ url, cluster string }

// StartManagementCheck begins, in the background until ctx ends: one
// /api/overview (m's failover finds a URL that answers); when m has
// several URLs, one /api/cluster-name from each of the others; when opts.URL lists
// several AMQP URLs, a dial of each but the one a Dial of the list tries
// first (named opts.Name, closed at once) for its cluster name. All run
// concurrently.
func StartManagementCheck(ctx context.Context, m *Management, opts Options) *ManagementCheck {
	k := &ManagementCheck{m: m, done: make(chan struct{})}
	go func() {
		defer close(k.done)
		var (
			mu            sync.Mutex
			rest          sync.WaitGroup
			amqps, others []side
		)
		rctx, cancel := context.WithTimeout(ctx, listWait)
		defer cancel()
		if urls, uris, err := ParseURLs(opts.URL); err == nil && len(urls) > 1 {
			// The URL a Dial of this list tries first is the one the
			// checked connection is on (or a URL that is down): that
			// connection says its own cluster.
			first := endpointsOf(opts.URL, urls).order()[0]
			for i := range urls {
				if i == first {
					continue
				}
				rest.Go(func() {
					oc, err := dialOne(rctx, opts, urls[i], uris[i])
					if err != nil {
						return
					}
					mu.Lock()
					amqps = append(amqps, side{url: oc.URL, cluster: oc.ClusterName()})
					mu.Unlock()
					_ = oc.Close()
				})
			}
		}
		if len(m.nodes) > 1 {
			m.mu.Lock()
			asked := m.current // the overview asks it first
			m.mu.Unlock()
			for i, n := range m.nodes {
				if i == asked {
					continue
				}
				rest.Go(func() {
					var cn struct {
						Name string `json:"name"`
					}
					if answered, err := m.doNode(rctx, n, http.MethodGet, "/cluster-name", nil, false, &cn); answered && err == nil {
						mu.Lock()
						others = append(others, side{url: n.base.String(), cluster: cn.Name})
						mu.Unlock()
					}
				})
			}
		}
		k.facts, k.err = m.Facts(ctx)
		if k.err != nil {
			return
		}
		all := make(chan struct{})
		go func() { rest.Wait(); close(all) }()
		select {
		case <-all:
		case <-time.After(answerGrace):
		case <-ctx.Done():
		}
		mu.Lock()
		k.amqp, k.others = slices.Clone(amqps), slices.Clone(others)
		mu.Unlock()
	}()
	return k
}

// Against waits for the check (while ctx lasts) and says whether its
// management API is the cluster c is connected to: nil, a
// *ManagementMismatchError, or, when no management URL answered, an error
// wrapping ErrNoManagement. A URL that did not answer in time is not
// checked.
func (k *ManagementCheck) Against(ctx context.Context, c *Conn) error {
	select {
	case <-k.done:
	case <-ctx.Done():
		return ctx.Err()
	}
	if k.err != nil {
		return k.err
	}
	err := judge(k.facts, k.others, k.amqp, c.URL, c.ClusterName())
	if err == nil || k.m == nil {
		return err
	}
	// The overview names running nodes only: a node that is stopping (the
	// one the connection is on, say) is missing from it, and its default
	// cluster name then points at no node. Before calling that a
	// mismatch, every member is asked for, running or not.
	members, merr := k.m.memberNodes(ctx)
	if merr != nil {
		return err
	}
	f := k.facts
	f.Nodes = slices.Clone(f.Nodes)
	for _, n := range members {
		if !slices.Contains(f.Nodes, n) {
			f.Nodes = append(f.Nodes, n)
		}
	}
	slices.Sort(f.Nodes)
	return judge(f, k.others, k.amqp, c.URL, c.ClusterName())
}

// memberNodes names every node of the cluster, running or not.
func (m *Management) memberNodes(ctx context.Context) ([]string, error) {
	var ns []struct {
		Name string `json:"name"`
	}
	if err := m.do(ctx, http.MethodGet, "/nodes?columns=name", nil, &ns); err != nil {
		return nil, err
	}
	out := make([]string, 0, len(ns))
	for _, n := range ns {
		out = append(out, n.Name)
	}
	return out, nil
}

// judge is Against's rule: every other management URL, the connection
// (connURL, its cluster name connCluster) and every other URL of its list
// belong to the cluster facts describes.
func judge(facts ManagementFacts, others, amqps []side, connURL, connCluster string) error {
	f := []ManagementFacts{facts}
	mismatch := &ManagementMismatchError{Management: facts.URL, ManagementCluster: facts.Cluster, ManagementNodes: facts.Nodes}
	for _, o := range others {
		if !belongs(o.cluster, f) {
			mismatch.Kind, mismatch.OtherManagement, mismatch.OtherCluster = MismatchManagementList, o.url, o.cluster
			return mismatch
		}
	}
	if !belongs(connCluster, f) {
		mismatch.AMQP, mismatch.AMQPCluster = connURL, connCluster
		return mismatch
	}
	for _, o := range amqps {
		if o.url != connURL && !belongs(o.cluster, f) {
			mismatch.Kind, mismatch.Connected = MismatchAMQPList, connURL
			mismatch.AMQP, mismatch.AMQPCluster = o.url, o.cluster
			return mismatch
		}
	}
	return nil
}

// ClusterName is the cluster_name the broker sent in its server
// properties ("" when it sent none).
func (c *Conn) ClusterName() string {
	if c == nil || c.Connection == nil {
		return ""
	}
	s, _ := c.Properties["cluster_name"].(string)
	return s
}

// Facts asks the management API (the first of its URLs that answers) what
// cluster it belongs to: one /api/overview.
func (m *Management) Facts(ctx context.Context) (ManagementFacts, error) {
	var o struct {
		Overview
		Node string `json:"node"`
	}
	if err := m.do(ctx, http.MethodGet, "/overview?columns=cluster_name,node,listeners", nil, &o); err != nil {
		return ManagementFacts{}, err
	}
	f := ManagementFacts{URL: m.URL(), Cluster: o.ClusterName, Node: o.Node}
	if o.Node != "" {
		f.Nodes = append(f.Nodes, o.Node)
	}
	for _, l := range o.Listeners {
		if l.Node != "" && !slices.Contains(f.Nodes, l.Node) {
			f.Nodes = append(f.Nodes, l.Node)
		}
	}
	slices.Sort(f.Nodes)
	return f, nil
}

// nodesOf is every node the answers name, once each, sorted.
func nodesOf(facts []ManagementFacts) []string {
	var out []string
	for _, f := range facts {
		for _, n := range f.Nodes {
			if !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
	}
	slices.Sort(out)
	return out
}

// belongs reports whether a broker whose server properties say cluster
// name cn is in the cluster the management answers facts describe: cn is
// a cluster name one of them reports, or cn is a default cluster name
// ("<prefix>@<host name>") whose prefix is a node's prefix and whose host
// is that node's host. A node's host name is known from a management node
// on the same host whose own default cluster name says it (rabbitc2@localhost
// is on host vm when rabbitc1@localhost reports rabbitc1@vm); else a short
// node host is completed with the domain such a name shows; else the two
// are the same name, or one starts the other's dotted name.
// A broker that sent no cluster_name cannot be told apart: it belongs.
func belongs(cn string, facts []ManagementFacts) bool {
	if cn == "" {
		return true
	}
	hostName := map[string]string{} // node host part → host name, from default cluster names
	for _, f := range facts {
		if f.Cluster == cn {
			return true
		}
		np, nh, ok1 := strings.Cut(f.Node, "@")
		cp, ch, ok2 := strings.Cut(f.Cluster, "@")
		if ok1 && ok2 && np == cp {
			hostName[strings.ToLower(nh)] = strings.ToLower(ch)
		}
	}
	prefix, host, ok := strings.Cut(cn, "@")
	if !ok {
		return false
	}
	host = strings.ToLower(host)
	// The domain the cluster's hosts are in, when a default cluster name
	// says it for a short host name (rabbit@rabbit-1 reporting
	// rabbit@rabbit-1.prod.example.com): a short name is then completed
	// with it rather than matched by its first label alone.
	domain := ""
	for nh, name := range hostName {
		if !strings.Contains(nh, ".") && strings.HasPrefix(name, nh+".") {
			domain = name[len(nh):]
		}
	}
	for _, n := range nodesOf(facts) {
		np, nh, ok := strings.Cut(n, "@")
		if !ok || np != prefix {
			continue
		}
		nh = strings.ToLower(nh)
		switch name, known := hostName[nh]; {
		case known:
			if name == host {
				return true
			}
		case domain != "" && !strings.Contains(nh, "."):
			if nh+domain == host {
				return true
			}
		case sameHost(nh, host):
			return true
		}
	}
	return false
}

// sameHost: equal, or one is the other's first labels ("rabbit-1" and
// "rabbit-1.prod.example.com").
func sameHost(a, b string) bool {
	return a == b || strings.HasPrefix(a, b+".") || strings.HasPrefix(b, a+".")
}
