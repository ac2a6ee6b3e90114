package ui

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/table"
	"github.com/charmbracelet/x/ansi"

	"github.com/parkinglot/parkinglot/replay/watch"
	"github.com/parkinglot/parkinglot/ui/format"
)

func (q *queuesScreen) View() string {
	st := q.c.styles
	lots, limited := 0, 0
	for _, r := range q.rows {
		if r.ParkingLot {
			lots++
			if q.finiteLimit(r.Name) {
				limited++
			}
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
		if limited > 0 {
			info += st.Warning.Render(fmt.Sprintf(", %d with a delivery limit (!)", limited))
		}
		var sel *QueueRow
		if c := q.table.Cursor(); c >= 0 && c < len(q.rows) {
			sel = &q.rows[c]
		}
		// On a cluster: the nodes down or in an alarm, where the selected
		// queue lives, or why it cannot be used now — before an action
		// finds out.
		if facts, warn := clusterFacts(q.nodes, q.rows, sel); len(facts) > 0 {
			style := st.Dim
			if warn {
				style = st.Warning
			}
			info += style.Render(" · " + clean(strings.Join(facts, " · ")))
		}
		// A finite delivery limit: one lost connection of whoever holds a
		// message counts toward it (README, browsing a 4.3 lot).
		if sel != nil && sel.ParkingLot && q.finiteLimit(sel.Name) {
			info += st.Warning.Render(" · " + clean(format.LimitRiskBrief(sel.Name, q.lots[sel.Name].DeliveryLimit)))
		}
		if sel != nil && sel.ParkingLot && q.risen(sel.Name) {
			info += st.Warning.Render(" · ↑ grew in the last minute")
		}
		info += st.Dim.Render(" · depth refreshes every 2s")
		if sel != nil && sel.Why != "" {
			info += st.Dim.Render(" · P: " + clean(sel.Why)) // why the selected queue is a parking lot
		}
	}
	if q.typing {
		info = q.search.View()
	}
	return format.Cut(info, q.width) + "\n" + q.table.View()
}

func (q *queuesScreen) ShortHelp() []key.Binding {
	k := q.c.keys
	if q.typing {
		return []key.Binding{described(k.Confirm, "search"), k.Cancel}
	}
	return []key.Binding{k.Up, k.Down, k.Open, described(k.Search, "search"), k.Refresh, k.Help, k.Quit}
}

func (q *queuesScreen) FullHelp() [][]key.Binding {
	k := q.c.keys
	if q.typing {
		return [][]key.Binding{{described(k.Confirm, "search every parking lot"), k.Cancel}}
	}
	return [][]key.Binding{{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom}, {k.Open, k.Search, k.Refresh}, {k.Help, k.Jobs, k.Quit, k.ForceQuit}}
}

// The TOP ERROR column's width: what the other columns leave, within
// these bounds.
const topMin, topMax = 16, 40

// columns fits the name to the longest one (within what the terminal
// leaves after the dashboard's columns) and gives TOP ERROR what the
// width leaves beside TYPE, UNACKED, CONSUMERS and PUBLISH, which a
// narrow terminal cuts first. Each cell has one column of right padding
// (the table style).
func (q *queuesScreen) columns() []table.Column {
	const dash = 3 + 1 + 9 + 1 + 7 + 1 + 7 + 1 + trendWidth + 1 + 1 // mark, MESSAGES, OLDEST, NEW 1H, TREND
	const tail = 8 + 1 + 9 + 1 + 10 + 1 + 9 + 1                     // TYPE, UNACKED, CONSUMERS, PUBLISH
	longest := 16
	for _, r := range q.rows {
		longest = max(longest, ansi.StringWidth(clean(r.Name)))
	}
	name := min(longest, max(q.width-dash-1-topMin-1, 16))
	q.topWidth = min(max(q.width-dash-(name+1)-1-tail, topMin), topMax)
	return []table.Column{
		{Title: "", Width: 3},
		{Title: "QUEUE", Width: name},
		{Title: "MESSAGES", Width: 9},
		{Title: "OLDEST", Width: 7},
		{Title: "NEW 1H", Width: 7},
		{Title: "TREND", Width: trendWidth + 1},
		{Title: "TOP ERROR", Width: q.topWidth},
		{Title: "TYPE", Width: 8},
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
			if q.finiteLimit(r.Name) {
				mark += "!" // the info line says why
			}
		}
		oldest, lastHour, trend, top := "", "", "", ""
		messages := fmtCount(r.Messages)
		if r.ParkingLot && q.risen(r.Name) {
			messages += "↑" // the info line says what it means
		}
		if r.ParkingLot {
			sn := q.lots[r.Name]
			oldest = format.Age(sn.OldestAge(q.c.now()))
			n, known := q.lastHour[r.Name]
			lastHour = format.Known(n, known)
			trend = format.Sparkline(q.trend[r.Name], trendWidth)
			g := sn.TopGroup()
			if r.Messages == 0 { // an emptied lot has no error, whatever the last count said
				g = watch.GroupCount{}
			}
			top = format.TopGroup(g.Group, g.Count, q.topWidth-1)
		}
		rows = append(rows, table.Row{
			mark,
			clean(r.Name),
			messages,
			oldest,
			lastHour,
			trend,
			top,
			r.Type,
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

// finiteLimit: the parking lot has a finite delivery limit, which a lost
// connection of whoever holds a message counts toward (README, browsing a
// 4.3 lot).
func (q *queuesScreen) finiteLimit(name string) bool {
	sn, ok := q.lots[name]
	return ok && sn.LimitKnown && sn.DeliveryLimit >= 0
}
