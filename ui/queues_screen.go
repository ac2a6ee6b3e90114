package ui

import (
	"slices"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/cursor"
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/table"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/replay/watch"
)

// queuesScreen lists every queue of the vhost, parking lots first; the
// root model refreshes the rows every few seconds.
type queuesScreen struct {
	c    *common
	rows []QueueRow
	// lots are the parking lots' last watch read, by name; trend each
	// one's depths since the screen opened (the sparkline).
	lots     map[string]watch.Snapshot
	lastHour map[string]int64 // Lots.LastHour of the last read
	trend    map[string][]int64
	// rose is when each parking lot's depth last rose between two
	// listings: the dashboard marks it for a minute (↑).
	rose    map[string]time.Time
	asked   bool      // the first lots read was asked for
	scan    *lotsScan // the error groups' count under way
	scanned bool      // a count of the groups was started
	// scannedAt is when the last count of the groups ended, scannedDepth
	// each lot's depth it counted: the groups are counted again when a
	// depth moved (staleGroups).
	scannedAt    time.Time
	scannedDepth map[string]int64
	away         bool              // a queue opened from here is on top: no reads
	topWidth     int               // the TOP ERROR column's (columns)
	nodes        []broker.NodeInfo // the cluster's (cluster.go)
	err          error
	loaded       bool
	table        table.Model
	width        int
	// want is a queue to put the cursor on once it is listed: the one
	// opened over this screen by name, or the one just left.
	want string
	// search is the prompt `/` opens: what to look for in every parking
	// lot; typing while it is open.
	search textinput.Model
	typing bool
}

func newQueuesScreen(c *common) *queuesScreen {
	km := table.DefaultKeyMap()
	// The table only moves; every other key is ours.
	km.LineUp, km.LineDown = c.keys.Up, c.keys.Down
	km.PageUp, km.PageDown = c.keys.PageUp, c.keys.PageDown
	km.GotoTop, km.GotoBottom = c.keys.Top, c.keys.Bottom
	km.HalfPageUp.SetEnabled(false)
	km.HalfPageDown.SetEnabled(false)
	ti := textinput.New()
	ti.Prompt = "search every parking lot: "
	ti.Placeholder = `text in id, error or body — or an expression, e.g. error contains "ledger" && attempts > 2`
	ti.CharLimit = 256
	ti.Cursor.SetMode(cursor.CursorStatic)
	q := &queuesScreen{c: c, lots: map[string]watch.Snapshot{}, lastHour: map[string]int64{}, trend: map[string][]int64{}, rose: map[string]time.Time{}, table: table.New(table.WithFocused(true), table.WithKeyMap(km), table.WithStyles(c.styles.Table)), search: ti}
	q.SetSize(c.width, c.height)
	return q
}

func (q *queuesScreen) Init() tea.Cmd   { return nil } // the root loads queues
func (q *queuesScreen) Title() string   { return "queues" }
func (q *queuesScreen) Queue() string   { return "" }
func (q *queuesScreen) Capturing() bool { return q.typing }
func (q *queuesScreen) Close() {
	if q.scan != nil {
		q.scan.cancel()
	}
}

func (q *queuesScreen) SetSize(w, h int) {
	q.width = w
	q.search.Width = max(w-len(q.search.Prompt)-1, 10)
	q.table.SetWidth(w)
	q.table.SetHeight(max(h-1, 2)) // the info line
	q.table.SetColumns(q.columns())
	q.setRows()
}

func (q *queuesScreen) Update(msg tea.Msg) (screen, tea.Cmd) {
	switch msg := msg.(type) {
	case clusterLoadedMsg:
		if msg.err == nil || msg.info.Nodes != nil {
			q.nodes = msg.info.Nodes
		}
	case lotsLoadedMsg:
		if msg.scan != nil && msg.scan == q.scan {
			q.scan = nil
		}
		if msg.scan != nil && msg.err == nil {
			q.scannedAt, q.scannedDepth = q.c.now(), map[string]int64{}
			for _, sn := range msg.lots.Snapshots {
				q.scannedDepth[sn.Queue] = sn.Depth
			}
		}
		var next tea.Cmd
		if msg.scan == nil && q.scan == nil && !q.away && (!q.scanned || q.staleGroups(msg.lots)) {
			// The first read of the ages is in, or a depth moved since
			// the groups were counted: count them (again).
			q.scanned = true
			q.scan, next = scanLots(q.c)
		}
		if msg.err == nil {
			for _, sn := range msg.lots.Snapshots {
				if msg.scan == nil { // keep the groups of the last scan
					sn.TopGroups = q.lots[sn.Queue].TopGroups
				}
				q.lots[sn.Queue] = sn
			}
			q.lastHour = msg.lots.LastHour
			keep := q.selectedName()
			q.sortByUrgency()
			q.setRows()
			q.seek(keep)
			q.seekWanted()
		}
		return q, next
	case queuesLoadedMsg:
		q.loaded = true
		q.err = msg.err
		if msg.err == nil {
			keep := q.selectedName()
			q.rows = msg.rows
			q.table.SetColumns(q.columns()) // the names' width
			for _, r := range q.rows {
				if r.ParkingLot {
					if t := q.trend[r.Name]; len(t) > 0 && r.Messages > t[len(t)-1] {
						q.rose[r.Name] = q.c.now()
					}
					t := append(q.trend[r.Name], r.Messages)
					q.trend[r.Name] = t[max(len(t)-trendWidth, 0):]
				}
			}
			q.sortByUrgency()
			q.setRows()
			q.seek(keep)
			q.seekWanted()
			if !q.asked && !q.away {
				q.asked = true
				return q, tea.Batch(loadLots(q.c), tickLots(q.c))
			}
		}
	case lotsTickMsg:
		if q.away || q.scan != nil {
			return q, tickLots(q.c)
		}
		return q, tea.Batch(loadLots(q.c), tickLots(q.c))
	case shownMsg:
		q.away = false
		if msg.from != "" {
			q.want = msg.from
		}
		q.seekWanted()
		if !q.asked { // opened under a queue: the first read starts now
			q.asked = true
			return q, tea.Batch(loadLots(q.c), tickLots(q.c))
		}
		return q, loadLots(q.c)
	case tea.KeyMsg:
		if q.typing {
			return q, q.updateSearch(msg)
		}
		k := q.c.keys
		q.want = "" // the person moves on: a late listing must not move the cursor
		switch {
		case key.Matches(msg, k.Search):
			q.typing = true
			return q, q.search.Focus()
		case key.Matches(msg, k.Open):
			if name := q.selectedName(); name != "" {
				// A scan holds messages while it counts: stop it, and
				// open the queue once it gave them back.
				s := q.scan
				q.scan, q.away = nil, true
				return q, afterScan(s, push(newMessagesScreen(q.c, name)))
			}
			return q, nil
		case key.Matches(msg, k.Refresh):
			q.scanned, q.scannedDepth = false, nil // the read below counts the groups again
			return q, tea.Batch(loadQueues(q.c), loadLots(q.c))
		}
		var cmd tea.Cmd
		q.table, cmd = q.table.Update(msg)
		q.setRows() // move the cursor mark
		return q, cmd
	}
	return q, nil
}

// updateSearch is a key typed into the search prompt: enter searches every
// parking lot, esc gives up.
func (q *queuesScreen) updateSearch(msg tea.KeyMsg) tea.Cmd {
	k := q.c.keys
	switch {
	case key.Matches(msg, k.Cancel):
		q.typing = false
		q.search.Blur()
		return nil
	case key.Matches(msg, k.Confirm):
		expr := strings.TrimSpace(q.search.Value())
		q.typing = false
		q.search.Blur()
		q.search.SetValue("")
		if expr == "" {
			return nil
		}
		// Like opening a queue: the groups' count holds messages, and a
		// held message is not found; search once it gave them back.
		s := q.scan
		q.scan, q.away = nil, true
		return afterScan(s, push(newSearchScreen(q.c, expr)))
	}
	var cmd tea.Cmd
	q.search, cmd = q.search.Update(msg)
	return cmd
}

// shownMsg tells a screen that the one above it closed; from is the queue
// that one showed ("" for none).
type shownMsg struct{ from string }

// coveredMsg tells the top screen that another is pushed over it.
type coveredMsg struct{}

// lotsTickMsg asks for the next read of the parking lots.
type lotsTickMsg struct{}

// lotsRefresh is how often the queues screen reads the parking lots'
// ages and arrivals again: the watch's own interval.
const lotsRefresh = watch.DefaultInterval

func tickLots(c *common) tea.Cmd {
	if c.refresh < 0 {
		return nil
	}
	return tea.Tick(lotsRefresh, func(time.Time) tea.Msg { return lotsTickMsg{} })
}

// rescanGap is the least time between two counts of the error groups: a
// count reads every parking lot whole.
const rescanGap = 30 * time.Second

// staleGroups reports whether the error groups counted last may no longer
// be the lots' (lots: a read of the depths since): a lot's depth moved, or
// a new lot appeared, and the last count ended rescanGap ago or more. A
// lot that emptied shows no group without a count (the view).
func (q *queuesScreen) staleGroups(lots Lots) bool {
	if q.scannedDepth == nil || q.c.now().Sub(q.scannedAt) < rescanGap {
		return false
	}
	for _, sn := range lots.Snapshots {
		if d, ok := q.scannedDepth[sn.Queue]; !ok || d != sn.Depth {
			return true
		}
	}
	return false
}

// roseFor is how long a lot whose depth rose is marked (↑).
const roseFor = time.Minute

// risen reports whether the lot's depth rose within roseFor.
func (q *queuesScreen) risen(name string) bool {
	at, ok := q.rose[name]
	return ok && q.c.now().Sub(at) < roseFor
}

// trendWidth is how many depth samples the sparkline shows.
const trendWidth = 10

// sortByUrgency keeps the parking lots first and orders them by urgency
// (watch.Urgency: the oldest message, then the depth, as `queues` does),
// the other queues by name after them. The depth is the latest listing's.
func (q *queuesScreen) sortByUrgency() {
	now := q.c.now()
	snap := func(r QueueRow) watch.Snapshot {
		sn := q.lots[r.Name]
		sn.Depth = r.Messages
		return sn
	}
	slices.SortStableFunc(q.rows, func(a, b QueueRow) int {
		return watch.LotsFirst(a.ParkingLot, b.ParkingLot, snap(a), snap(b), now)
	})
}

func (q *queuesScreen) selectedName() string {
	if c := q.table.Cursor(); c >= 0 && c < len(q.rows) {
		return q.rows[c].Name
	}
	return ""
}

// seek keeps the cursor on the same queue across refreshes; it reports
// whether the queue is listed. The rows are drawn again: the cursor mark
// is in them.
func (q *queuesScreen) seek(name string) bool {
	for i, r := range q.rows {
		if r.Name == name {
			if q.table.Cursor() != i {
				q.table.SetCursor(i)
				q.setRows()
			}
			return true
		}
	}
	return false
}

// seekWanted puts the cursor on the queue wanted once it is listed.
func (q *queuesScreen) seekWanted() {
	if q.want != "" && q.seek(q.want) {
		q.want = ""
	}
}
