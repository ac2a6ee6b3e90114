//go:build cluster && integration

package cli_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker/brokertest"
	"github.com/parkinglot/parkinglot/broker/brokertest/clustertest"
	"github.com/parkinglot/parkinglot/ui/cli/clitest"
)

// The brokers of this machine these tests pair: node 1 of the 4.3 cluster
// of make cluster, the system 3.10 broker on the default ports, and the
// standalone 4.3 broker. None is stopped.
const (
	node1AMQP    = "amqp://guest:guest@127.0.0.1:5681/"
	node2AMQP    = "amqp://guest:guest@127.0.0.1:5682/"
	node1Mgmt    = "http://guest:guest@127.0.0.1:15681"
	standalone43 = "amqp://guest:guest@127.0.0.1:5674/"
	mgmt43       = "http://guest:guest@127.0.0.1:15674"
)

// clusterLot declares a classic queue holding n messages and an empty
// destination queue on the cluster (through node 1), both deleted at the
// end, and returns their names and a function that reads both depths.
func clusterLot(t *testing.T, n int) (lot, dest string, depths func() (int, int)) {
	t.Helper()
	clustertest.UseCluster(t) // starts the cluster if a node does not answer; stops nothing
	conn, err := amqp.Dial(node1AMQP)
	if err != nil {
		t.Fatalf("the cluster's node 1 (make cluster): %v", err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	lot, dest = brokertest.Name(t, "dlq"), brokertest.Name(t, "dest")
	for _, q := range []string{lot, dest} {
		if _, err := ch.QueueDeclare(q, true, false, false, false, amqp.Table{"x-queue-type": "classic"}); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		for _, q := range []string{lot, dest} {
			_, _ = ch.QueueDelete(q, false, false, false)
		}
	})
	if err := ch.Confirm(false); err != nil {
		t.Fatal(err)
	}
	confirms := ch.NotifyPublish(make(chan amqp.Confirmation, n))
	for i := range n {
		if err := ch.Publish("", lot, true, false, amqp.Publishing{MessageId: fmt.Sprintf("m-%d", i), Body: []byte("x")}); err != nil {
			t.Fatal(err)
		}
	}
	for range n {
		if c := <-confirms; !c.Ack {
			t.Fatal("the broker refused a test message")
		}
	}
	depths = func() (int, int) {
		t.Helper()
		a, err := ch.QueueDeclarePassive(lot, true, false, false, false, nil)
		if err != nil {
			t.Fatal(err)
		}
		b, err := ch.QueueDeclarePassive(dest, true, false, false, false, nil)
		if err != nil {
			t.Fatal(err)
		}
		return a.Messages, b.Messages
	}
	return lot, dest, depths
}

// mismatchLine is the refusal's line, found in out: it names both URLs
// (password masked), both clusters and the fix.
func mismatchLine(t *testing.T, out, amqpURL, amqpCluster, mgmtURL, mgmtCluster string) {
	t.Helper()
	var line string
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "is not the broker of") {
			line = strings.TrimSpace(l)
		}
	}
	if line == "" {
		t.Fatalf("no refusal line in:\n%s", out)
	}
	for _, want := range []string{amqpURL, amqpCluster, mgmtURL, mgmtCluster, "--management-url", "management_url", "--allow-management-mismatch"} {
		if !strings.Contains(line, want) {
			t.Errorf("the refusal %q does not name %s", line, want)
		}
	}
	if strings.Contains(out, "guest:guest") {
		t.Errorf("a password is shown:\n%s", out)
	}
}

// TestClusterManagementMismatchRefused: AMQP to the cluster's node 1
// without --management-url assumes http://127.0.0.1:15672, the system
// 3.10 broker's. queues, list, replay, topology declare, daemon and the
// TUI (in a terminal) refuse with one line naming both and exit 2, the
// assumed URL is said on stderr, and nothing changes on the cluster.
func TestClusterManagementMismatchRefused(t *testing.T) {
	lot, dest, depths := clusterLot(t, 3)
	c := clitest.NewCLI(t, "PARKINGLOT_URL="+node1AMQP, "PARKINGLOT_MANAGEMENT_URL=")
	check := func(what string, r clitest.Result) {
		t.Helper()
		if r.Code != 2 {
			t.Errorf("%s: exit %d, want 2\n%s%s", what, r.Code, r.Stdout, r.Stderr)
		}
		if r.Stdout != "" {
			t.Errorf("%s printed on stdout (one broker's facts beside another's?):\n%s", what, r.Stdout)
		}
		mismatchLine(t, r.Stderr, "amqp://guest:xxxxx@127.0.0.1:5681/", "rabbitc1@vm", "http://127.0.0.1:15672", "rabbit@vm")
		if n := strings.Count(r.Stderr, "assuming http://guest:xxxxx@127.0.0.1:15672 for amqp://guest:xxxxx@127.0.0.1:5681/"); n != 1 {
			t.Errorf("%s: the assumed management URL is said %d times, want once:\n%s", what, n, r.Stderr)
		}
	}
	check("queues", c.Run("", "queues"))
	check("list", c.Run("", "list", lot))
	check("replay", c.Run("", "replay", lot, "--all", "--to", ":"+dest, "--yes"))
	check("delete", c.Run("", "delete", lot, "--all", "--yes"))

	pipeline := brokertest.Name(t, "pipe")
	file := filepath.Join(t.TempDir(), "pipeline.yaml")
	yaml := fmt.Sprintf("name: %[1]s\nqueue_type: classic\nmain: {exchange: %[1]s.main, queue: %[1]s.main.queue, routing_key: work}\nretry: {exchange: %[1]s.retry, routing_key: retry, delays: [1s]}\nerror: {exchange: %[1]s.error, queue: %[1]s.dlq, routing_key: error}\nmax_retries: 1\n", pipeline)
	if err := os.WriteFile(file, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	check("topology declare", c.Run("", "topology", "declare", "-f", file))
	check("daemon", c.Run("", "daemon", "-f", file, "--exec", "true"))

	tm := startTerminal(t, []string{"PARKINGLOT_URL=" + node1AMQP, "PARKINGLOT_MANAGEMENT_URL="}, "tui", lot)
	code, out := tm.exit()
	if code != 2 {
		t.Errorf("tui: exit %d, want 2; it showed:\n%s", code, out)
	}
	mismatchLine(t, out, "amqp://guest:xxxxx@127.0.0.1:5681/", "rabbitc1@vm", "http://127.0.0.1:15672", "rabbit@vm")

	if l, d := depths(); l != 3 || d != 0 {
		t.Errorf("after the refusals the parking lot holds %d and the destination %d, want 3 and 0", l, d)
	}
	conn, err := amqp.Dial(node1AMQP)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ch.QueueDeclarePassive(pipeline+".main.queue", true, false, false, false, nil); err == nil {
		t.Errorf("the refused topology declare or daemon declared %s.main.queue", pipeline)
	}
}

// TestClusterManagementMatchingPair: node 2's AMQP with node 1's
// management API is one cluster (each node reports its own default
// cluster name, rabbitc2@vm and rabbitc1@vm): queues names node 2, list
// and replay work, and nothing is said about a mismatch.
func TestClusterManagementMatchingPair(t *testing.T) {
	lot, dest, depths := clusterLot(t, 3)
	c := clitest.NewCLI(t, "PARKINGLOT_URL="+node2AMQP, "PARKINGLOT_MANAGEMENT_URL="+node1Mgmt)
	r := c.Run("", "queues")
	if r.Code != 0 || !strings.HasPrefix(r.Stdout, "connected to rabbitc2@localhost (amqp://guest:xxxxx@127.0.0.1:5682/)") || !strings.Contains(r.Stdout, lot) {
		t.Errorf("queues: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	r = c.Run("", "list", lot)
	if r.Code != 0 || strings.Count(r.Stdout, "m-") != 3 {
		t.Errorf("list: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	r = c.Run("", "replay", lot, "--all", "--to", ":"+dest, "--yes")
	if r.Code != 0 {
		t.Errorf("replay: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	if l, d := depths(); l != 0 || d != 3 {
		t.Errorf("after the replay the parking lot holds %d and the destination %d, want 0 and 3", l, d)
	}
	for _, out := range []string{r.Stdout, r.Stderr} {
		if strings.Contains(out, "mismatch") || strings.Contains(out, "not the broker") || strings.Contains(out, "assuming") {
			t.Errorf("a matching pair said:\n%s", out)
		}
	}
}

// TestClusterManagementURLListsOfTwoClusters: an AMQP list with the
// standalone 4.3 broker and the cluster's node 1 is refused whichever URL
// the connection picks (with the cluster's management API, or with the
// assumed one), and so is a management list of the two.
func TestClusterManagementURLListsOfTwoClusters(t *testing.T) {
	lot, _, depths := clusterLot(t, 3)
	amqpList := standalone43 + "," + node1AMQP
	for _, env := range [][]string{
		{"PARKINGLOT_URL=" + amqpList, "PARKINGLOT_MANAGEMENT_URL=" + node1Mgmt},
		{"PARKINGLOT_URL=" + amqpList, "PARKINGLOT_MANAGEMENT_URL="},
		{"PARKINGLOT_URL=" + node1AMQP, "PARKINGLOT_MANAGEMENT_URL=" + mgmt43 + "," + node1Mgmt},
	} {
		c := clitest.NewCLI(t, env...)
		// The first URL is a random one: several runs see both orders.
		for range 4 {
			r := c.Run("", "list", lot)
			if r.Code != 2 || r.Stdout != "" {
				t.Errorf("%v: list: exit %d, want 2\n%s%s", env, r.Code, r.Stdout, r.Stderr)
			}
			line := strings.TrimSpace(r.Stderr[strings.LastIndex(strings.TrimSpace(r.Stderr), "\n")+1:])
			if !strings.Contains(line, "two clusters") && !strings.Contains(line, "is not the broker of") {
				t.Errorf("%v: the refusal %q", env, line)
			}
			if !strings.Contains(line, "rabbit43@vm") && !strings.Contains(line, "rabbit@vm") {
				t.Errorf("%v: the refusal %q does not name the other cluster", env, line)
			}
		}
	}
	if l, _ := depths(); l != 3 {
		t.Errorf("the parking lot holds %d, want 3", l)
	}
}

// TestClusterManagementOverride: --allow-management-mismatch lets the
// mismatched pair run, and says so once on stderr: queues connects to the
// cluster's node 1 and lists the queues the management API (the system
// broker's) knows, which is what was asked for.
func TestClusterManagementOverride(t *testing.T) {
	lot, _, _ := clusterLot(t, 3)
	c := clitest.NewCLI(t, "PARKINGLOT_URL="+node1AMQP, "PARKINGLOT_MANAGEMENT_URL=")
	r := c.Run("", "--allow-management-mismatch", "queues")
	if r.Code != 0 || !strings.HasPrefix(r.Stdout, "connected to amqp://guest:xxxxx@127.0.0.1:5681/") || strings.Contains(r.Stdout, lot) {
		t.Errorf("queues: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	if n := strings.Count(r.Stderr, "--allow-management-mismatch: the management API is used without checking"); n != 1 {
		t.Errorf("the override is said %d times, want once:\n%s", n, r.Stderr)
	}
	if strings.Contains(r.Stderr, "is not the broker of") {
		t.Errorf("refused despite the override:\n%s", r.Stderr)
	}
}
