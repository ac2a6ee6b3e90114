package cli

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/replay"
	"github.com/parkinglot/parkinglot/replay/watch"
	"github.com/parkinglot/parkinglot/ui/format"
)

// QueuesOptions are `parkinglot queues`'s.
type QueuesOptions struct {
	*Factory
	Scan bool // count each parking lot's error groups (a browse pass each)
}

// NewCmdQueues is `parkinglot queues`.
func NewCmdQueues(f *Factory, runF func(context.Context, *QueuesOptions) error) *cobra.Command {
	opts := &QueuesOptions{Factory: f}
	cmd := &cobra.Command{
		Use:   "queues [--scan]",
		Short: "List queues with type, depth and consumers; parking lots first, the most urgent first, with their oldest message's age",
		Long: `List the vhost's queues. Parking lots come first, ordered by urgency (the
oldest message first, then the deepest), with the age of their oldest
message read by the rules of 'parkinglot watch' ("-" where a single read
cannot tell: a quorum parking lot without --scan, or one whose type the
broker does not say), and the messages published into them in the last hour (NEW 1H;
"-" where the broker does not count them, as for a parking lot filled by
dead-lettering alone). --scan also counts each parking lot's error groups
(TOP ERROR) with a harmless browse pass of each one holding up to 100,000
messages.
Depths are the management API's statistics, which lag a few seconds behind
an action.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return queuesRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.Scan, "scan", false, "count each parking lot's error groups for TOP ERROR (a browse pass each)")
	return cmd
}

// connNodeWait is how long `queues` waits, beside the queue listing, to
// learn which node its connection is on. The cluster's listeners usually
// say at once; the management API's connection listing takes seconds
// (4–5 s, measured), and a listing is not held up for it: the line
// then says the node is not known yet.
const connNodeWait = 1500 * time.Millisecond

func queuesRun(ctx context.Context, opts *QueuesOptions) error {
	s, err := opts.engineSession(ctx, "queues")
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
	// The parking lots' oldest age and top error group, read by the
	// watch's own rules on this session, so they match what it exports.
	lots := watch.Once(ctx, watch.Options{TopGroups: 1, Log: opts.Log,
		Open: func(context.Context, string) (*replay.Session, error) { return s, nil }}, opts.Scan)
	now := time.Now()
	v := QueuesView{Rows: rows, Conn: <-conn, Nodes: <-nodes, Lots: map[string]watch.Snapshot{}, Now: now,
		LastHour: watch.ArrivalsLastHour(ctx, s, lots, now)}
	for _, sn := range lots {
		v.Lots[sn.Queue] = sn
	}
	for i := range v.Rows {
		v.Rows[i] = replay.ReconcileRow(v.Rows[i], v.Nodes)
		v.Rows[i] = lotDepth(v.Rows[i], v.Lots)
	}
	v.sortByUrgency()
	if opts.JSON() {
		return WriteQueuesJSON(opts.IOStreams.Out, v)
	}
	return WriteQueues(opts.IOStreams.Out, v)
}

// lotDepth gives a parking lot the depth the watch read after the
// listing, when it is larger: the listing's statistics lag a few seconds
// behind the queue, and the watch counts ready messages with a passive
// declare where the statistics say 0 (replay.Session.Depth), so a person
// reads the depth the watch exports.
func lotDepth(r replay.QueueRow, lots map[string]watch.Snapshot) replay.QueueRow {
	if sn, ok := lots[r.Name]; ok && r.ParkingLot && sn.Found && sn.Depth > r.Messages {
		r.MessagesReady += sn.Depth - r.Messages
		r.Messages = sn.Depth
	}
	return r
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
	// Lots are the parking lots as the watch reads them, by name; nil: no
	// OLDEST and TOP ERROR columns. Now is when the ages are told.
	Lots map[string]watch.Snapshot
	Now  time.Time
	// LastHour are the parking lots' arrivals in the last hour
	// (watch.ArrivalsLastHour), by name; a parking lot not in it: not
	// known.
	LastHour map[string]int64
}

// sortByUrgency puts the parking lots first, the most urgent first
// (watch.Urgency: the oldest message, then the depth), the other queues
// after them by name, as Queues left them.
func (v QueuesView) sortByUrgency() {
	slices.SortStableFunc(v.Rows, func(a, b replay.QueueRow) int {
		return watch.LotsFirst(a.ParkingLot, b.ParkingLot, v.Lots[a.Name], v.Lots[b.Name], v.Now)
	})
}

// lotCells are a parking lot's OLDEST, NEW 1H and TOP ERROR cells ("-"
// when not known, "" for other queues).
func (v QueuesView) lotCells(r replay.QueueRow) (oldest, lastHour, top string) {
	sn, ok := v.Lots[r.Name]
	if !r.ParkingLot || !ok {
		return "", "", ""
	}
	n, known := v.LastHour[r.Name]
	g := sn.TopGroup()
	return format.Age(sn.OldestAge(v.Now)), format.Known(n, known), format.TopGroup(g.Group, g.Count, 72)
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
	head := "\tNAME\tTYPE\tMESSAGES\tREADY\tUNACKED\tCONSUMERS\t"
	if v.Lots != nil {
		head += "OLDEST\tNEW 1H\t"
	}
	if cluster {
		head += "NODES\t"
	}
	head += "WHY"
	if v.Lots != nil {
		head += "\tTOP ERROR"
	}
	fmt.Fprintln(tw, head)
	for _, r := range v.Rows {
		mark := ""
		if r.ParkingLot {
			mark = "*"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d\t%d\t", mark, r.Name, r.Type, r.Messages, r.MessagesReady, r.MessagesUnacknowledged, r.Consumers)
		oldest, lastHour, top := v.lotCells(r)
		if v.Lots != nil {
			fmt.Fprintf(tw, "%s\t%s\t", oldest, lastHour)
		}
		if cluster {
			cell := replay.Placement(r.QueueInfo, name)
			if cell == "" {
				cell = "-"
			}
			fmt.Fprintf(tw, "%s\t", cell)
		}
		if v.Lots != nil {
			fmt.Fprintf(tw, "%s\t%s\n", format.OneLine(r.Why), top)
		} else {
			fmt.Fprintf(tw, "%s\n", format.OneLine(r.Why))
		}
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
	for _, r := range v.Rows {
		if sn, ok := v.Lots[r.Name]; ok && r.ParkingLot && sn.LimitKnown && sn.DeliveryLimit >= 0 {
			if _, err := fmt.Fprintln(w, format.LimitRisk(r.Name, sn.DeliveryLimit)); err != nil {
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
	// A parking lot's oldest age in seconds, where its value comes from
	// (watch.AgeSource), and its largest error group, as the watch
	// exports them.
	OldestAgeSeconds *float64 `json:"oldest_age_seconds,omitempty"`
	OldestSource     string   `json:"oldest_source,omitempty"`
	// The messages published into a parking lot in the last hour
	// (watch.ArrivalsLastHour); absent when the broker does not count them.
	ArrivalsLastHour *int64 `json:"arrivals_last_hour,omitempty"`
	TopErrorGroup    string `json:"top_error_group,omitempty"`
	TopErrorCount    int64  `json:"top_error_count,omitempty"`
	// DeliveryLimit is a parking lot's effective delivery limit, -1 for
	// none; absent when not known.
	DeliveryLimit *int64              `json:"delivery_limit,omitempty"`
	ConnectedTo   *replay.ConnNode    `json:"connected_to,omitempty"`
	Nodes         map[string]nodeJSON `json:"nodes,omitempty"`
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
		if sn, ok := v.Lots[r.Name]; ok && r.ParkingLot {
			age := sn.OldestAge(v.Now).Seconds()
			out[i].OldestAgeSeconds, out[i].OldestSource = &age, string(sn.Source)
			g := sn.TopGroup()
			out[i].TopErrorGroup, out[i].TopErrorCount = g.Group, g.Count
			if n, ok := v.LastHour[r.Name]; ok {
				out[i].ArrivalsLastHour = &n
			}
			if sn.LimitKnown {
				l := sn.DeliveryLimit
				out[i].DeliveryLimit = &l
			}
		}
	}
	return WriteJSONLines(w, out)
}
