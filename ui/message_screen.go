package ui

import (
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/viewport"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/broker/store"
	"github.com/parkinglot/parkinglot/replay"
)

// messageScreen shows one message: why it failed (x-last-error,
// x-retry-count and the death history first), its properties, every
// header, and the body pretty-printed, in one scrollable viewport.
type messageScreen struct {
	c      *common
	queue  string
	sum    replay.Summary
	source *queueSource

	msg     *broker.Message
	loadErr error
	loading bool
	// acted: an action that removes the message was started here; once
	// it is done the screen goes back to the list.
	acted bool
	// raw shows the body's bytes as they are on the wire, as hex (v).
	raw   bool
	vp    viewport.Model
	width int
}

func newMessageScreen(c *common, queue string, s replay.Summary, src *queueSource) *messageScreen {
	m := &messageScreen{c: c, queue: queue, sum: s, source: src, vp: viewport.New(c.width, c.height)}
	m.SetSize(c.width, c.height)
	return m
}

func (m *messageScreen) Init() tea.Cmd { return m.load() }

func (m *messageScreen) load() tea.Cmd {
	if m.msg != nil || m.loading || m.source.src == nil {
		m.refresh()
		return nil
	}
	m.loading = true
	m.refresh()
	return loadMessage(m.source.src, m.sum.Index)
}

func (m *messageScreen) Title() string   { return clean(m.sum.ID) }
func (m *messageScreen) Queue() string   { return m.queue }
func (m *messageScreen) Capturing() bool { return false }
func (m *messageScreen) Close()          {}

func (m *messageScreen) SetSize(w, h int) {
	m.width = w
	m.vp.Width, m.vp.Height = w, max(h, 1)
	m.refresh()
}

// refresh rebuilds the viewport's content, keeping the scroll position.
func (m *messageScreen) refresh() {
	y := m.vp.YOffset
	m.vp.SetContent(m.content())
	m.vp.SetYOffset(y)
}

func (m *messageScreen) Update(msg tea.Msg) (screen, tea.Cmd) {
	switch msg := msg.(type) {
	case messageLoadedMsg:
		if msg.src != m.source.src && msg.src != nil || msg.index != m.sum.Index || !m.loading {
			return m, nil
		}
		m.loading = false
		if msg.err != nil {
			m.loadErr = msg.err
		} else {
			mm := msg.msg
			m.msg = &mm
		}
		m.refresh()
	case browseDoneMsg:
		// The list's browse finished: the copies to read the body from are
		// there now (the list screen handles the message first).
		return m, m.load()
	case refreshQueueMsg:
		if msg.queue == m.queue && m.acted && msg.removed {
			return m, pop
		}
	case tea.KeyMsg:
		return m, m.handleKey(msg)
	}
	return m, nil
}

func (m *messageScreen) handleKey(msg tea.KeyMsg) tea.Cmd {
	k := m.c.keys
	switch {
	case key.Matches(msg, k.Up):
		m.vp.ScrollUp(1)
	case key.Matches(msg, k.Down):
		m.vp.ScrollDown(1)
	case key.Matches(msg, k.PageUp):
		m.vp.PageUp()
	case key.Matches(msg, k.PageDown):
		m.vp.PageDown()
	case key.Matches(msg, k.Top):
		m.vp.GotoTop()
	case key.Matches(msg, k.Bottom):
		m.vp.GotoBottom()
	case key.Matches(msg, k.Left):
		m.vp.ScrollLeft(8)
	case key.Matches(msg, k.Right):
		m.vp.ScrollRight(8)
	case key.Matches(msg, k.Back):
		return pop
	case key.Matches(msg, k.RawBody):
		m.raw = !m.raw
		m.refresh()
	case key.Matches(msg, k.Edit):
		m.acted = true
		m.stopList()
		return openDialog(newEditDialog(m.c, m.queue, m.sum.ID))
	case key.Matches(msg, k.ReplayOne), key.Matches(msg, k.ReplayMany), key.Matches(msg, k.Delete), key.Matches(msg, k.Export):
		return m.action(msg)
	}
	return nil
}

// action opens the dialog that replays, deletes or exports this message.
func (m *messageScreen) action(msg tea.KeyMsg) tea.Cmd {
	k := m.c.keys
	ids, err := store.IDSetOf(m.sum.ID)
	if err != nil {
		return status(statusError, err.Error())
	}
	what := "message " + clean(m.sum.ID)
	// The id takes every copy the list holds (parked twice), as from the
	// list.
	n := 1
	if m.source != nil && m.source.carrying != nil {
		c, err := m.source.carrying(ids)
		if err != nil {
			ids.Close()
			return status(statusError, err.Error())
		}
		n = max(c, 1)
	}
	m.stopList()
	var d *dialog
	switch {
	case key.Matches(msg, k.Delete):
		m.acted = true
		d = newDeleteDialog(m.c, m.queue, what, ids, n)
	case key.Matches(msg, k.Export):
		d = newExportDialog(m.c, m.queue, what, ids, n)
	default:
		m.acted = true
		d = newReplayDialog(m.c, m.queue, what, ids, n)
	}
	d.copies = n - 1
	return openDialog(d)
}

// stopList stops the read of the list underneath, as the list does for
// its own actions: the dialog's plan or pass waits for its give-back.
func (m *messageScreen) stopList() {
	if m.source != nil && m.source.stopRead != nil {
		m.source.stopRead()
	}
}

func (m *messageScreen) View() string { return m.vp.View() }

func (m *messageScreen) ShortHelp() []key.Binding {
	k := m.c.keys
	return []key.Binding{k.Down, k.pageDownShort(), k.ReplayOne, k.Edit, k.Delete, k.Export, k.Back, k.Help, k.Quit}
}

func (m *messageScreen) FullHelp() [][]key.Binding {
	k := m.c.keys
	return [][]key.Binding{
		{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom, k.Left, k.Right},
		{k.ReplayOne, k.Edit, k.Delete, k.Export, k.RawBody},
		{k.Back, k.Help, k.Jobs, k.Quit, k.ForceQuit},
	}
}
