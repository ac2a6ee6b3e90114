package ui

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/cursor"
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/broker/store"
	"github.com/parkinglot/parkinglot/replay"
	"github.com/parkinglot/parkinglot/ui/format"
)

// queueSource is the message copies of the latest browse, shared with the
// message screens opened from the list; stopRead is the list's
// stopLoading, for an action a message screen starts, and carrying counts
// the list's messages that carry an id of a set (msgIndex.carrying).
type queueSource struct {
	src      MessageSource
	stopRead func()
	carrying func(*store.IDSet) (int, error)
}

// messagesScreen lists one queue's messages: virtualised, filtered as you
// type, sorted, optionally folded into error groups.
type messagesScreen struct {
	c     *common
	queue string

	data    *msgIndex
	pending *msgIndex // a reload streams here and replaces data when done
	source  *queueSource
	feed    *feed
	loading bool
	stopped bool // a browse was stopped for an action; reload when its dialog closes
	loadErr error
	facts   broker.QueueFacts
	report  broker.PassReport
	loaded  bool // at least one browse finished

	filter    textinput.Model
	typing    bool
	expr      string // a broker-side filter (typed as "=EXPR"); the browse lists only its matches
	sort      sortMode
	reverse   bool
	grouped   bool
	openGroup string // the group opened from the grouped view
	groupPos  int    // the grouped view's cursor, restored on esc
	selected  selection
	carry     *store.IDSet // ids selected before a fresh browse, found again as it streams
	// openID is a message to open as soon as the first browse streams it
	// (a search's match opened where it lives).
	openID string

	// live tails the lot once the first browse ended; reloadAt is when
	// the list last reloaded for arrivals, reloadDue that arrivals wait
	// for the next.
	live      *live
	reloadAt  time.Time
	reloadDue bool

	rows    []int32    // flat view: indices into data
	groups  []msgGroup // grouped view
	builtAt int        // data.len() when rows or groups were last computed
	list    vlist
	width   int
}

func newMessagesScreen(c *common, queue string) *messagesScreen {
	ti := textinput.New()
	ti.Prompt = "/"
	ti.Placeholder = "id, error, origin or routing key — or =EXPR on the broker side, e.g. =attempts > 2"
	ti.CharLimit = 256
	ti.Cursor.SetMode(cursor.CursorStatic) // no blink timer: fewer redraws, stable screens
	m := &messagesScreen{
		c: c, queue: queue, data: emptyIndex(), source: &queueSource{},
		filter: ti,
	}
	m.source.stopRead = m.stopLoading
	m.source.carrying = func(ids *store.IDSet) (int, error) { return m.data.carrying(ids) }
	m.SetSize(c.width, c.height)
	return m
}

// newMessagesScreenOn lists queue and opens message id once the browse
// finds it, with the cursor on it.
func newMessagesScreenOn(c *common, queue, id string) *messagesScreen {
	m := newMessagesScreen(c, queue)
	m.openID = id
	return m
}

// Init lists the queue and tails it: an arrival from the list's opening on
// is marked new, one during the first browse included.
func (m *messagesScreen) Init() tea.Cmd {
	var tail tea.Cmd
	m.live, tail = startLive(m.c, m.queue)
	return tea.Batch(m.load(), tail)
}

// load starts a browse; the first one streams into the list, later ones
// replace it when complete so the list does not flicker.
func (m *messagesScreen) load() tea.Cmd {
	if why := m.c.busy(m.queue); why != "" {
		m.stopLoading()
		m.stopped = true
		return status(statusWarn, why)
	}
	if m.feed != nil {
		m.feed.abandon()
	}
	m.dropPending()
	idx, err := newMsgIndex()
	if err != nil {
		m.feed, m.loading, m.loadErr, m.stopped = nil, false, err, false
		return status(statusError, "browse "+m.queue+": "+err.Error())
	}
	if m.loaded {
		m.pending = idx
	} else {
		// Streamed in afresh: a selection made on the part loaded so far
		// is found again by id as the messages arrive.
		m.dropCarry()
		if m.selected.len() > 0 {
			if ids, err := m.data.idSet(m.selected.indices()); err == nil {
				m.carry = ids
			}
			m.selected.clear()
		}
		m.data.close()
		m.data = idx
		m.rebuild()
	}
	f, cmd := startBrowse(m.c, m.queue, m.expr)
	m.feed, m.loading, m.loadErr, m.stopped = f, true, nil, false
	return cmd
}

// stopLoading gives the browse's messages back before an action takes
// them (a held message is invisible to the action's own pass): it
// cancels the browse, and the action's plan or pass waits for the
// give-back before it reads (common.turn). The list reloads once the
// dialog closes.
func (m *messagesScreen) stopLoading() {
	if m.feed != nil {
		m.feed.abandon()
		m.feed = nil
		m.stopped = true
	}
	m.loading = false
}

// dropPending forgets a reload that has not finished.
func (m *messagesScreen) dropPending() {
	if m.pending != nil {
		m.pending.close()
		m.pending = nil
	}
}

func (m *messagesScreen) Close() {
	if m.live != nil {
		m.live.stop()
	}
	m.stopLoading()
	m.dropPending()
	m.dropCarry()
	m.data.close()
	if m.source.src != nil {
		_ = m.source.src.Close()
		m.source.src = nil
	}
}

// dropCarry forgets the selection carried into a fresh browse.
func (m *messagesScreen) dropCarry() {
	m.carry.Close()
	m.carry = nil
}

func (m *messagesScreen) Title() string {
	if m.openGroup != "" {
		return m.queue + " › " + clean(m.openGroup)
	}
	return m.queue
}

func (m *messagesScreen) Queue() string   { return m.queue }
func (m *messagesScreen) Capturing() bool { return m.typing }

func (m *messagesScreen) SetSize(w, h int) {
	m.width = w
	m.filter.Width = max(w-4, 10)
	m.list.setHeight(h - 2) // info line and column header
}

func (m *messagesScreen) Update(msg tea.Msg) (screen, tea.Cmd) {
	switch msg := msg.(type) {
	case feedBatchMsg:
		if msg.f != m.feed {
			return m, nil
		}
		into := m.data
		if m.pending != nil {
			into = m.pending
		}
		from := m.data.len()
		if err := into.add(msg.batch); err != nil {
			m.stopLoading()
			m.stopped = false
			m.dropPending()
			m.loadErr = err
			return m, status(statusError, "browse "+m.queue+": "+err.Error())
		}
		if m.pending == nil {
			for k, s := range msg.batch {
				if m.carry == nil {
					break
				}
				if in, err := m.carry.Contains(s.ID); in && err == nil {
					m.selected.set(int32(from+k), true)
				}
			}
			m.grow(from)
			if open := m.openFound(msg.batch, from); open != nil {
				return m, tea.Batch(m.feed.next(), open)
			}
		}
		return m, m.feed.next()
	case browseDoneMsg:
		if msg.f != m.feed {
			return m, nil
		}
		cmd := m.browseDone(msg)
		if m.reloadDue && !m.loading {
			cmd = tea.Batch(cmd, m.reloadForArrivals())
		}
		return m, cmd
	case arrivalMsg:
		if msg.l != m.live {
			return m, nil
		}
		m.live.arrived(msg.s)
		return m, tea.Batch(m.live.next(), m.reloadForArrivals())
	case liveReloadMsg:
		if m.reloadDue && !m.loading {
			return m, m.reloadForArrivals()
		}
	case liveReadyMsg:
		if msg.l == m.live {
			m.live.live = true
			return m, m.live.next()
		}
	case liveGapMsg:
		if msg.l == m.live {
			return m, tea.Batch(m.live.next(), status(statusWarn, "live arrivals of "+m.queue+": "+format.TailGap(msg.gap)))
		}
	case liveEndedMsg:
		if msg.l == m.live && msg.err != nil {
			// Without the management API every list would say the same:
			// once a session is enough.
			if errors.Is(msg.err, broker.ErrNoManagement) {
				if m.c.liveNoManagementSaid {
					return m, nil
				}
				m.c.liveNoManagementSaid = true
			}
			return m, status(statusWarn, liveEndedText(m.queue, msg.err))
		}
	case refreshQueueMsg:
		if msg.queue == m.queue {
			return m, m.load()
		}
	case closeDialogMsg:
		if m.stopped {
			return m, m.load() // finish what the action interrupted
		}
	case tea.KeyMsg:
		if m.typing {
			return m, m.updateFilter(msg)
		}
		return m, m.handleKey(msg)
	}
	return m, nil
}

// openFound opens the message openID names if batch (streamed at index
// from on) holds it, with the cursor on its row.
func (m *messagesScreen) openFound(batch []replay.Summary, from int) tea.Cmd {
	if m.openID == "" {
		return nil
	}
	for k, s := range batch {
		if s.ID == m.openID {
			m.openID = ""
			m.seekIndex(int32(from+k), true)
			return push(newMessageScreen(m.c, m.queue, s, m.source))
		}
	}
	return nil
}

func (m *messagesScreen) browseDone(msg browseDoneMsg) tea.Cmd {
	m.feed, m.loading = nil, false
	m.dropCarry()
	var gone tea.Cmd // the message a search found is not there now
	if m.openID != "" && msg.err == nil {
		gone = status(statusWarn, "message "+m.openID+" is no longer in "+m.queue)
	}
	m.openID = ""
	if msg.err != nil {
		m.loadErr = msg.err
		if msg.res.Messages != nil {
			_ = msg.res.Messages.Close()
		}
		m.dropPending()
		return status(statusError, "browse "+m.queue+": "+msg.err.Error())
	}
	if m.pending != nil {
		keep := ""
		if i, ok := m.currentIndex(); ok {
			keep, _ = m.data.id(i)
		}
		old := m.data
		m.data, m.pending = m.pending, nil
		m.carrySelection(old)
		old.close()
		m.rebuild()
		if keep != "" {
			m.seekIndex(m.data.find(keep))
		}
	} else if m.builtAt != m.data.len() {
		m.resort() // the order or the groups were approximate while streaming
	}
	if m.source.src != nil {
		_ = m.source.src.Close()
	}
	m.source.src = msg.res.Messages
	m.facts, m.report, m.loaded = msg.res.Facts, msg.res.Report, true
	var depth tea.Cmd
	if m.expr == "" {
		n := m.data.len()
		depth = func() tea.Msg { return depthMsg{queue: m.queue, n: n} }
	}
	if m.report.Refreshed > 0 {
		return tea.Batch(depth, gone, status(statusWarn, fmt.Sprintf("%d message(s) were re-published to the queue's tail to keep them from its delivery limit", m.report.Refreshed)))
	}
	return tea.Batch(depth, gone)
}

// rebuild recomputes the visible rows after the data, filter, sort or
// grouping changed.
func (m *messagesScreen) rebuild() {
	m.builtAt = m.data.len()
	var err error
	if m.grouped {
		m.groups, err = m.data.groupsOf(m.filter.Value())
		m.list.setCount(len(m.groups))
	} else {
		m.rows, err = m.data.view(m.filter.Value(), m.openGroup, m.sort, m.reverse)
		m.list.setCount(len(m.rows))
	}
	if err != nil {
		m.loadErr = err // shown in the list's place: the rows may be incomplete
	}
}

// grow folds newly streamed summaries (from index from on) into the view
// without recomputing it: appending is exact for the queue order; other
// orders and the groups are recomputed each time the data has doubled,
// and once when the browse ends — O(n log n) in all, not per batch.
func (m *messagesScreen) grow(from int) {
	if !m.grouped && m.sort == sortQueue && !m.reverse {
		err := m.data.match(int32(from), strings.ToLower(m.filter.Value()), m.openGroup, func(i int32) { m.rows = append(m.rows, i) })
		if err != nil {
			m.loadErr = err
		}
		m.builtAt = m.data.len()
		m.list.setCount(len(m.rows))
		return
	}
	if m.data.len() >= 2*m.builtAt {
		m.resort()
	}
}

func (m *messagesScreen) updateFilter(msg tea.KeyMsg) tea.Cmd {
	k := m.c.keys
	switch {
	case key.Matches(msg, k.Back):
		m.filter.SetValue("")
		m.typing = false
		m.filter.Blur()
		m.rebuild()
		return nil
	case msg.Type == tea.KeyEnter, msg.Type == tea.KeyUp, msg.Type == tea.KeyDown:
		m.typing = false
		m.filter.Blur()
		if expr, ok := strings.CutPrefix(m.filter.Value(), "="); ok {
			return m.setExpr(strings.TrimSpace(expr))
		}
		if msg.Type != tea.KeyEnter {
			return m.handleKey(msg)
		}
		return nil
	}
	before := m.filter.Value()
	var cmd tea.Cmd
	m.filter, cmd = m.filter.Update(msg)
	if v := m.filter.Value(); v != before && !strings.HasPrefix(v, "=") {
		m.rebuild()
		m.list.top()
	}
	return cmd
}

// setExpr browses again with a broker-side filter ("" removes it); the
// list then holds only its matches.
func (m *messagesScreen) setExpr(expr string) tea.Cmd {
	m.filter.SetValue("")
	m.expr = expr
	m.loaded = false // a different set: stream it in afresh
	m.selected.clear()
	m.list.top()
	return m.load()
}

func (m *messagesScreen) handleKey(msg tea.KeyMsg) tea.Cmd {
	k := m.c.keys
	switch {
	case m.list.navigate(k, msg):
	case key.Matches(msg, k.Filter):
		m.typing = true
		if m.badExpr() && m.filter.Value() == "" {
			m.filter.SetValue("=" + m.expr) // to edit, as the list's hint says
			m.filter.CursorEnd()
		}
		return m.filter.Focus()
	case key.Matches(msg, k.Sort):
		m.sort = (m.sort + 1) % sortModes
		m.resort()
	case key.Matches(msg, k.Reverse):
		m.reverse = !m.reverse
		m.resort()
	case key.Matches(msg, k.Group):
		m.toggleGroups()
	case key.Matches(msg, k.Select):
		m.toggleSelect()
	case key.Matches(msg, k.SelectAll):
		m.selectAllShown()
	case key.Matches(msg, k.Open):
		return m.open()
	case key.Matches(msg, k.Refresh):
		return m.load()
	case key.Matches(msg, k.Back):
		return m.back()
	case key.Matches(msg, k.ReplayOne), key.Matches(msg, k.ReplayMany),
		key.Matches(msg, k.Edit), key.Matches(msg, k.Delete), key.Matches(msg, k.Export):
		return m.action(msg)
	case key.Matches(msg, k.Import):
		// The list's pass would see some of the new messages and not
		// others: it stops, and reloads once the dialog closes.
		m.stopLoading()
		return openDialog(newImportDialog(m.c, m.queue))
	}
	return nil
}

// badExpr reports that the broker-side filter did not compile: the list
// failed on it, and only editing it helps.
func (m *messagesScreen) badExpr() bool {
	return m.expr != "" && errors.Is(m.loadErr, replay.ErrBadFilter)
}

// back undoes one thing at a time: selection, filter, broker-side filter,
// opened group, grouping; then it leaves the screen.
func (m *messagesScreen) back() tea.Cmd {
	switch {
	case m.selected.len() > 0:
		m.selected.clear()
	case m.filter.Value() != "":
		m.filter.SetValue("")
		m.rebuild()
	case m.expr != "":
		return m.setExpr("")
	case m.openGroup != "":
		m.openGroup, m.grouped = "", true
		m.rebuild()
		m.list.cursor = m.groupPos
		m.list.clamp()
	case m.grouped:
		m.toggleGroups()
	default:
		return pop
	}
	return nil
}

func (m *messagesScreen) resort() {
	keep, ok := m.currentIndex()
	m.rebuild()
	m.seekIndex(keep, ok)
}

func (m *messagesScreen) toggleGroups() {
	m.openGroup = ""
	m.grouped = !m.grouped
	m.rebuild()
	m.list.top()
}

func (m *messagesScreen) open() tea.Cmd {
	if m.grouped {
		if g, ok := m.currentGroup(); ok {
			m.groupPos = m.list.cursor
			m.grouped, m.openGroup = false, g.Key
			m.filter.SetValue("")
			m.rebuild()
			m.list.top()
		}
		return nil
	}
	s, ok := m.current()
	if !ok {
		return nil
	}
	return push(newMessageScreen(m.c, m.queue, s, m.source))
}
