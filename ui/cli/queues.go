package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/replay"
)

// QueuesOptions are `parkinglot queues`'s.
type QueuesOptions struct {
	*Factory
}

// NewCmdQueues is `parkinglot queues`.
func NewCmdQueues(f *Factory, runF func(context.Context, *QueuesOptions) error) *cobra.Command {
	opts := &QueuesOptions{Factory: f}
	return &cobra.Command{
		Use:   "queues",
		Short: "List queues with type, depth and consumers; parking lots marked; on a cluster, where each lives",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return queuesRun(cmd.Context(), opts)
		},
	}
}

// connNodeWait is how long `queues` waits, beside the queue listing, to
// learn which node its connection is on. The cluster's listeners usually
// say at once; the management API's connection listing takes seconds
// (README, "Clusters"), and a listing is not held up for it: the line
// then says the node is not known yet.
const connNodeWait = 1500 * time.Millisecond

func queuesRun(ctx context.Context, opts *QueuesOptions) error {
	s, err := opts.Session(ctx, "queues")
	if err != nil {
		return err
	}
	defer s.Close()
	conn := make(chan replay.ConnNode, 1)
	nodes := make(chan []broker.NodeInfo, 1)
	go func() {
		cctx, cancel := context.WithTimeout(ctx, connNodeWait)
		defer cancel()
		c, _ := s.ConnectionNode(cctx)
		conn <- c
	}()
	go func() {
		ns, _ := s.Nodes(ctx) // the listing reports a management API that does not answer
		nodes <- ns
	}()
	rows, err := s.Queues(ctx)
	if err != nil {
		return err
	}
	v := QueuesView{Rows: rows, Conn: <-conn, Nodes: <-nodes}
	for i := range v.Rows {
		v.Rows[i] = replay.ReconcileRow(v.Rows[i], v.Nodes)
	}
	if opts.JSON() {
		return WriteQueuesJSON(opts.IOStreams.Out, v)
	}
	return WriteQueues(opts.IOStreams.Out, v)
}

// QueuesView is what `queues` prints: the queues, the cluster's nodes and
// the node the connection is on.
type QueuesView struct {
	Rows []replay.QueueRow
	// Nodes are the cluster's nodes (one on a single broker; nil when the
	// management API did not say).
	Nodes []broker.NodeInfo
	// Conn is the connection's URL and node (Node "" while not known).
	Conn replay.ConnNode
}

// cluster reports more than one node: the NODES column and the nodes
// line are printed only then.
func (v QueuesView) cluster() bool {
	if len(v.Nodes) > 1 {
		return true
	}
	for _, r := range v.Rows {
		if len(r.Members) > 1 {
			return true
		}
	}
	return false
}

// namer shortens node names ("rabbitc1@localhost" → "rabbitc1") when the
// cluster's names allow it.
func (v QueuesView) namer() func(string) string {
	lists := [][]string{replay.NodeNames(v.Nodes)}
	for _, r := range v.Rows {
		lists = append(lists, r.Members, []string{r.Node})
	}
	return replay.NodeNamer(lists...)
}

// WriteQueues prints the queue table; parking lots are marked with "*".
// Above it: the node the connection is on (with the URL in use), and on a
// cluster the nodes that are down or in an alarm. On a cluster a NODES
// column says where each queue lives ("leader rabbitc1, 2/3 online",
// "rabbitc3 (down)"); below the table, each queue that cannot be used now
// says why, in words.
func WriteQueues(w io.Writer, v QueuesView) error {
	name := v.namer()
	cluster := v.cluster()
	if line := connectedLine(v.Conn); line != "" {
		fmt.Fprintln(w, line)
	}
	if trouble := replay.NodeTrouble(v.Nodes, name); len(trouble) > 0 {
		fmt.Fprintf(w, "nodes: %s (%d of %d running)\n", strings.Join(trouble, "; "), running(v.Nodes), len(v.Nodes))
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	if cluster {
		fmt.Fprintln(tw, "\tNAME\tTYPE\tMESSAGES\tREADY\tUNACKED\tCONSUMERS\tNODES\tWHY")
	} else {
		fmt.Fprintln(tw, "\tNAME\tTYPE\tMESSAGES\tREADY\tUNACKED\tCONSUMERS\tWHY")
	}
	for _, r := range v.Rows {
		mark := ""
		if r.ParkingLot {
			mark = "*"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d\t%d\t", mark, r.Name, r.Type, r.Messages, r.MessagesReady, r.MessagesUnacknowledged, r.Consumers)
		if cluster {
			cell := replay.Placement(r.QueueInfo, name)
			if cell == "" {
				cell = "-"
			}
			fmt.Fprintf(tw, "%s\t", cell)
		}
		fmt.Fprintf(tw, "%s\n", oneLine(r.Why))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if _, err := fmt.Fprintln(w, "* parking lot"); err != nil {
		return err
	}
	for _, r := range v.Rows {
		if u := replay.Unavailable(r.QueueInfo, r.ParkingLot, name); u != "" {
			if _, err := fmt.Fprintf(w, "%s: %s\n", r.Name, u); err != nil {
				return err
			}
		}
	}
	return nil
}

// connectedLine names the node the connection is on and the URL in use
// ("connected to rabbitc2@localhost (amqp://guest:xxxxx@127.0.0.1:5682/)").
func connectedLine(c replay.ConnNode) string {
	switch {
	case c.URL == "":
		return ""
	case c.Node == "":
		return "connected to " + c.URL + " (node not known yet: the management API lists a new connection after a few seconds)"
	}
	return "connected to " + c.Node + " (" + c.URL + ")"
}

func running(nodes []broker.NodeInfo) int {
	n := 0
	for _, x := range nodes {
		if x.Running {
			n++
		}
	}
	return n
}

// queueJSON is one line of `queues -o json`: the queue's fields (name,
// type, messages, …, parking_lot, why; leader, members, online, node,
// offline, unavailable), the connection (connected_to: url and node), and
// while some node is down or in an alarm, nodes: those nodes by name.
type queueJSON struct {
	replay.QueueRow
	ConnectedTo *replay.ConnNode    `json:"connected_to,omitempty"`
	Nodes       map[string]nodeJSON `json:"nodes,omitempty"`
}

type nodeJSON struct {
	Running       bool     `json:"running"`
	MemAlarm      bool     `json:"mem_alarm"`
	DiskFreeAlarm bool     `json:"disk_free_alarm"`
	Partitions    []string `json:"partitions,omitempty"`
}

// WriteQueuesJSON prints one JSON object per queue (queueJSON): the same
// lines as before clusters, with fields added.
func WriteQueuesJSON(w io.Writer, v QueuesView) error {
	var conn *replay.ConnNode
	if v.Conn.URL != "" {
		conn = &v.Conn
	}
	var nodes map[string]nodeJSON
	for _, n := range v.Nodes {
		if n.Trouble() {
			if nodes == nil {
				nodes = map[string]nodeJSON{}
			}
			nodes[n.Name] = nodeJSON{Running: n.Running, MemAlarm: n.MemAlarm, DiskFreeAlarm: n.DiskFreeAlarm, Partitions: n.Partitions}
		}
	}
	out := make([]queueJSON, len(v.Rows))
	for i, r := range v.Rows {
		out[i] = queueJSON{QueueRow: r, ConnectedTo: conn, Nodes: nodes}
	}
	return WriteJSONLines(w, out)
}
