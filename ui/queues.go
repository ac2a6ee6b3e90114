package ui

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/table"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/parkinglot/parkinglot/broker"
)

// queuesScreen lists every queue of the vhost, parking lots first; the
// root model refreshes the rows every few seconds.
type queuesScreen struct {
	c      *common
	rows   []QueueRow
	nodes  []broker.NodeInfo // the cluster's (cluster.go)
	err    error
	loaded bool
	table  table.Model
	width  int
}

func newQueuesScreen(c *common) *queuesScreen {
	km := table.DefaultKeyMap()
	// The table only moves; every other key is ours.
	km.LineUp, km.LineDown = c.keys.Up, c.keys.Down
	km.PageUp, km.PageDown = c.keys.PageUp, c.keys.PageDown
	km.GotoTop, km.GotoBottom = c.keys.Top, c.keys.Bottom
	km.HalfPageUp.SetEnabled(false)
	km.HalfPageDown.SetEnabled(false)
	q := &queuesScreen{c: c, table: table.New(table.WithFocused(true), table.WithKeyMap(km), table.WithStyles(c.styles.Table))}
	q.SetSize(c.width, c.height)
	return q
}

func (q *queuesScreen) Init() tea.Cmd   { return nil } // the root loads queues
func (q *queuesScreen) Title() string   { return "queues" }
func (q *queuesScreen) Queue() string   { return "" }
func (q *queuesScreen) Capturing() bool { return false }
func (q *queuesScreen) Close()          {}

func (q *queuesScreen) SetSize(w, h int) {
	q.width = w
	q.table.SetWidth(w)
	q.table.SetHeight(max(h-1, 2)) // the info line
	q.table.SetColumns(q.columns())
	q.setRows()
}

func (q *queuesScreen) columns() []table.Column {
	// Each cell has one column of right padding (the table style).
	fixed := 3 + 8 + 9 + 9 + 10 + 9 + 7
	name := max(q.width-fixed, 16)
	return []table.Column{
		{Title: "", Width: 3},
		{Title: "QUEUE", Width: name},
		{Title: "TYPE", Width: 8},
		{Title: "MESSAGES", Width: 9},
		{Title: "UNACKED", Width: 9},
		{Title: "CONSUMERS", Width: 10},
		{Title: "PUBLISH", Width: 9},
	}
}

func (q *queuesScreen) setRows() {
	rows := make([]table.Row, 0, len(q.rows))
	cursor := max(q.table.Cursor(), 0) // the table leaves it at -1 after an empty list
	for i, r := range q.rows {
		// The cursor mark shows the row without colour (NO_COLOR drops
		// the reverse video).
		mark := " "
		if i == cursor {
			mark = "▸"
		}
		if r.ParkingLot {
			mark += "P"
		}
		rows = append(rows, table.Row{
			mark,
			clean(r.Name),
			r.Type,
			fmtCount(r.Messages),
			fmtCount(r.MessagesUnacknowledged),
			strconv.FormatInt(r.Consumers, 10),
			fmtRate(r.PublishRate()),
		})
	}
	q.table.SetRows(rows)
	if q.table.Cursor() < 0 && len(rows) > 0 {
		q.table.SetCursor(0)
	}
}

func (q *queuesScreen) Update(msg tea.Msg) (screen, tea.Cmd) {
	switch msg := msg.(type) {
	case clusterLoadedMsg:
		if msg.err == nil || msg.info.Nodes != nil {
			q.nodes = msg.info.Nodes
		}
	case queuesLoadedMsg:
		q.loaded = true
		q.err = msg.err
		if msg.err == nil {
			keep := q.selectedName()
			q.rows = msg.rows
			q.setRows()
			q.seek(keep)
		}
	case tea.KeyMsg:
		k := q.c.keys
		switch {
		case key.Matches(msg, k.Open):
			if name := q.selectedName(); name != "" {
				return q, push(newMessagesScreen(q.c, name))
			}
			return q, nil
		case key.Matches(msg, k.Refresh):
			return q, loadQueues(q.c)
		}
		var cmd tea.Cmd
		q.table, cmd = q.table.Update(msg)
		q.setRows() // move the cursor mark
		return q, cmd
	}
	return q, nil
}

func (q *queuesScreen) selectedName() string {
	if c := q.table.Cursor(); c >= 0 && c < len(q.rows) {
		return q.rows[c].Name
	}
	return ""
}

// seek keeps the cursor on the same queue across refreshes.
func (q *queuesScreen) seek(name string) {
	for i, r := range q.rows {
		if r.Name == name {
			q.table.SetCursor(i)
			return
		}
	}
}

func (q *queuesScreen) View() string {
	st := q.c.styles
	lots := 0
	for _, r := range q.rows {
		if r.ParkingLot {
			lots++
		}
	}
	var info string
	switch {
	case !q.loaded:
		info = st.Dim.Render("Loading queues…")
	case q.err != nil && len(q.rows) == 0:
		info = st.Error.Render("✗ "+clean(q.err.Error())) + st.Dim.Render(" — open a queue with `parkinglot tui QUEUE`")
	case len(q.rows) == 0:
		info = st.Dim.Render("No queues in this vhost.")
	default:
		info = fmt.Sprintf("%d queues, %s", len(q.rows), st.Parking.Render(fmt.Sprintf("%d parking lot(s) (P)", lots)))
		var sel *QueueRow
		if c := q.table.Cursor(); c >= 0 && c < len(q.rows) {
			sel = &q.rows[c]
		}
		// On a cluster: the nodes down or in an alarm, where the selected
		// queue lives, or why it cannot be used now (README, "Clusters").
		if facts, warn := clusterFacts(q.nodes, q.rows, sel); len(facts) > 0 {
			style := st.Dim
			if warn {
				style = st.Warning
			}
			info += style.Render(" · " + clean(strings.Join(facts, " · ")))
		}
		info += st.Dim.Render(" · depth refreshes every 2s")
		if sel != nil && sel.Why != "" {
			info += st.Dim.Render(" · P: " + clean(sel.Why)) // why the selected queue is a parking lot
		}
	}
	return cut(info, q.width) + "\n" + q.table.View()
}

func (q *queuesScreen) ShortHelp() []key.Binding {
	k := q.c.keys
	return []key.Binding{k.Up, k.Down, k.Open, k.Refresh, k.Help, k.Quit}
}

func (q *queuesScreen) FullHelp() [][]key.Binding {
	k := q.c.keys
	return [][]key.Binding{{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom}, {k.Open, k.Refresh}, {k.Help, k.Quit}}
}
