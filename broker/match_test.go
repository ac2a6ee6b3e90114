package broker

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// The management answers of the brokers on this machine, as measured: the
// cluster's nodes each report their own default cluster name, so a default
// name matches when it names one of the management API's nodes.
var (
	systemFacts  = ManagementFacts{URL: "http://127.0.0.1:15672", Cluster: "rabbit@vm", Node: "rabbit@localhost", Nodes: []string{"rabbit@localhost"}}
	clusterNodes = []string{"rabbitc1@localhost", "rabbitc2@localhost", "rabbitc3@localhost"}
	c1Facts      = ManagementFacts{URL: "http://127.0.0.1:15681", Cluster: "rabbitc1@vm", Node: "rabbitc1@localhost", Nodes: clusterNodes}
	c3Facts      = ManagementFacts{URL: "http://127.0.0.1:15683", Cluster: "rabbitc3@vm", Node: "rabbitc3@localhost", Nodes: clusterNodes}
	standalone43 = ManagementFacts{URL: "http://127.0.0.1:15674", Cluster: "rabbit43@vm", Node: "rabbit43@localhost", Nodes: []string{"rabbit43@localhost"}}
)

func TestBelongs(t *testing.T) {
	prod := ManagementFacts{Cluster: "rabbit@rabbit-1.prod.example.com", Node: "rabbit@rabbit-1", Nodes: []string{"rabbit@rabbit-1", "rabbit@rabbit-2", "rabbit@rabbit-3"}}
	named := ManagementFacts{Cluster: "payments", Node: "rabbit@a", Nodes: []string{"rabbit@a", "rabbit@b"}}
	for _, tc := range []struct {
		name  string
		cn    string
		facts []ManagementFacts
		want  bool
	}{
		{"the node the management answers from", "rabbitc1@vm", []ManagementFacts{c1Facts}, true},
		{"another node of its cluster, host named otherwise", "rabbitc2@vm", []ManagementFacts{c1Facts}, true},
		{"a cluster node against the system broker", "rabbitc1@vm", []ManagementFacts{systemFacts}, false},
		{"the system broker against the cluster", "rabbit@vm", []ManagementFacts{c1Facts}, false},
		{"a standalone broker against the cluster", "rabbit43@vm", []ManagementFacts{c1Facts, c3Facts}, false},
		{"a node by its host's first label", "rabbit@rabbit-2.prod.example.com", []ManagementFacts{prod}, true},
		{"same prefix, another host", "rabbit@rabbit-2.staging.example.com", []ManagementFacts{prod}, false},
		{"a cluster name someone set", "payments", []ManagementFacts{named}, true},
		{"another set name", "billing", []ManagementFacts{named}, false},
		{"no cluster_name sent", "", []ManagementFacts{systemFacts}, true},
	} {
		if got := belongs(tc.cn, tc.facts); got != tc.want {
			t.Errorf("%s: belongs(%q) = %v, want %v", tc.name, tc.cn, got, tc.want)
		}
	}
}

func TestJudge(t *testing.T) {
	c1, c43 := "amqp://guest:xxxxx@127.0.0.1:5681/", "amqp://guest:xxxxx@127.0.0.1:5674/"
	kind := func(err error) MismatchKind {
		var mm *ManagementMismatchError
		if !errors.As(err, &mm) {
			t.Fatalf("%v is not a mismatch", err)
		}
		return mm.Kind
	}
	clusterMgmt := []side{{c1Facts.URL, "rabbitc1@vm"}, {"http://127.0.0.1:15682", "rabbitc2@vm"}, {c3Facts.URL, "rabbitc3@vm"}}
	if err := judge(c1Facts, clusterMgmt, []side{{c1, "rabbitc1@vm"}, {"amqp://guest:xxxxx@127.0.0.1:5682/", "rabbitc2@vm"}}, c1, "rabbitc1@vm"); err != nil {
		t.Errorf("the cluster's own lists: %v", err)
	}
	if err := judge(systemFacts, nil, nil, c1, "rabbitc1@vm"); kind(err) != MismatchPair {
		t.Errorf("node 1 with the system broker's management API: %v", err)
	}
	if err := judge(c1Facts, []side{{c1Facts.URL, "rabbitc1@vm"}, {standalone43.URL, "rabbit43@vm"}}, nil, c1, "rabbitc1@vm"); kind(err) != MismatchManagementList {
		t.Errorf("management URLs of two clusters: %v", err)
	}
	err := judge(c1Facts, nil, []side{{c43, "rabbit43@vm"}, {c1, "rabbitc1@vm"}}, c1, "rabbitc1@vm")
	var mm *ManagementMismatchError
	if kind(err) != MismatchAMQPList || !errors.As(err, &mm) || mm.AMQP != c43 || mm.Connected != c1 {
		t.Errorf("AMQP URLs of two clusters: %v", err)
	}
}

func TestManagementMismatchError(t *testing.T) {
	err := error(&ManagementMismatchError{AMQP: "amqp://guest:xxxxx@127.0.0.1:5681/", AMQPCluster: "rabbitc1@vm",
		Management: systemFacts.URL, ManagementCluster: systemFacts.Cluster, ManagementNodes: systemFacts.Nodes})
	if !errors.Is(err, ErrManagementMismatch) {
		t.Error("does not match ErrManagementMismatch")
	}
	for _, want := range []string{"127.0.0.1:5681", "rabbitc1@vm", "http://127.0.0.1:15672", "rabbit@vm", "rabbit@localhost"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q does not name %s", err, want)
		}
	}
}

func TestAssumedManagementURLs(t *testing.T) {
	got := AssumedManagementURLs("amqp://u:p@h1:5681/,amqp://u:p@h2:5672/,amqp://u:p@h1:5682/")
	want := []string{"http://u:p@h1:15672", "http://u:p@h2:15672", "http://u:p@h1:15672"}
	if !slices.Equal(got, want) {
		t.Errorf("pairs %q, want %q", got, want)
	}
	if got := ManagementURL("amqp://u:p@h1:5681/,amqp://u:p@h2:5672/,amqp://u:p@h1:5682/"); got != "http://u:p@h1:15672,http://u:p@h2:15672" {
		t.Errorf("ManagementURL %q", got)
	}
}
