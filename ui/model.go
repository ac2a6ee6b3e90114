package ui

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/parkinglot/parkinglot/broker/body"
	"github.com/parkinglot/parkinglot/ui/editor"
)

// Options configure the TUI.
type Options struct {
	// Queue opens the TUI on this queue's messages ("" opens the queues).
	Queue string
	// Renderer decides colours (NO_COLOR); nil is lipgloss's default for
	// stdout.
	Renderer *lipgloss.Renderer
	// Now is the clock for ages (tests fix it); nil is time.Now.
	Now func() time.Time
	// Editor runs an editor on a file; nil runs $VISUAL or $EDITOR (vi).
	Editor func(path string, done func(error) tea.Msg) tea.Cmd
	// ExportDir is where exports go by default ("" is the working
	// directory).
	ExportDir string
	// Refresh is how often queue depths are read again: 0 is every 2s,
	// negative never (tests).
	Refresh time.Duration
	// Notice is the first status line (the demo says what it did).
	Notice string
	// SearchKeep is how many matches a search keeps to show (0:
	// replay.DefaultSearchKeep); the rest are counted.
	SearchKeep int
	// Bodies reads message bodies with the schemas of the config's
	// decode and the flags; nil reads them by their properties alone.
	Bodies *body.Reader
}

// Model is the root model: the navigation stack of screens, the dialog on
// top of them, the status bar and the help bar.
type Model struct {
	c      *common
	cancel context.CancelFunc
	stack  []screen
	dialog *dialog
	// jobs are dialogs sent to the background, running or keeping their
	// result until dismissed (jobs.go); quitAsk: a quit waits for the
	// answer to "stop the jobs?"; quitting: it was yes.
	jobs    []*dialog
	quitAsk bool
	// stopped: the dialog on screen whose action a quit stopped; its
	// outcome is told with the jobs' (JobSummaries).
	stopped  *dialog
	quitting bool

	queues    []QueueRow
	queuesErr error
	// cluster is the connection's node and the cluster's nodes
	// (cluster.go); clusterLoading while loadCluster has not answered.
	cluster        Cluster
	clusterLoading bool
	counted        map[string]counted // depths a browse counted, fresher than the management API's
	status         string
	kind           statusKind
	statusAt       time.Time // when the line shown was decided: an older one arriving late is dropped
	fullHelp       bool
	helpTop        int // the full help's first line shown, when it is taller than the body
	width          int
	height         int
}

// New builds the root model. Call Close after the program ends: it stops
// background work and waits until every held message was given back.
func New(ctx context.Context, b Backend, opts Options) *Model {
	ctx, cancel := context.WithCancel(ctx)
	r := opts.Renderer
	if r == nil {
		r = lipgloss.DefaultRenderer()
	}
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	editor := opts.Editor
	if editor == nil {
		editor = runEditor
	}
	c := &common{
		ctx: ctx, backend: b, styles: NewStyles(r), keys: DefaultKeyMap(),
		now: now, editor: editor, exportDir: opts.ExportDir, describe: b.Describe(),
		workers: newWorkers(), width: 80, height: 20, refresh: opts.Refresh, searchKeep: opts.SearchKeep, bodies: opts.Bodies,
	}
	if c.refresh == 0 {
		c.refresh = queueRefresh
	}
	m := &Model{c: c, cancel: cancel, width: 80, height: 24, counted: map[string]counted{}, status: opts.Notice}
	c.jobOn = m.jobOn
	c.jobQueues = func() []string {
		var qs []string
		for _, j := range m.jobs {
			if j.active() {
				qs = append(qs, j.queue)
			}
		}
		return qs
	}
	qs := newQueuesScreen(c)
	m.stack = []screen{qs}
	if opts.Queue != "" {
		// The queues screen reads the parking lots' heads and counts their
		// groups with whole passes; under the queue asked for it waits
		// until it is shown, or it would hold that queue's messages while
		// the person browses and replays them.
		qs.away, qs.want = true, opts.Queue
		m.stack = append(m.stack, newMessagesScreen(c, opts.Queue))
	}
	return m
}

// runEditor opens path in the editor (editor.Name: $VISUAL, $EDITOR,
// then vi), giving it the terminal.
func runEditor(path string, done func(error) tea.Msg) tea.Cmd {
	cmd, err := editor.Command(context.Background(), path)
	if err != nil {
		return func() tea.Msg { return done(err) }
	}
	return tea.ExecProcess(cmd, done)
}

// Init loads the queues, starts the depth refresh and the top screen.
func (m *Model) Init() tea.Cmd {
	return tea.Batch(loadQueues(m.c), m.clusterCmd(), tickQueues(m.c), m.top().Init())
}

func (m *Model) top() screen { return m.stack[len(m.stack)-1] }

// Close cancels everything in flight and waits (bounded) for the workers:
// a browse gives its held messages back before it returns.
func (m *Model) Close() error {
	if m.dialog != nil {
		m.dialog.abort()
	}
	for _, j := range m.jobs {
		j.abort()
	}
	for _, s := range m.stack {
		s.Close()
	}
	m.cancel()
	if !m.c.workers.wait(30 * time.Second) {
		return fmt.Errorf("some broker work did not stop within 30s; held messages return to their queues when the connection closes")
	}
	for _, s := range m.stack {
		s.Close() // spools delivered while waiting
	}
	return nil
}

// Update routes messages: keys to the dialog or the top screen, results to
// whoever started the work, sizes to everyone.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.resize(msg.Width, msg.Height)
		return m, nil
	case tea.KeyMsg:
		return m, m.handleKey(msg)
	case pushMsg:
		under, cmd := m.top().Update(coveredMsg{})
		m.stack[len(m.stack)-1] = under
		m.stack = append(m.stack, msg.s)
		msg.s.SetSize(m.c.width, m.c.height)
		return m, tea.Batch(cmd, msg.s.Init())
	case popMsg:
		if len(m.stack) > 1 {
			from := m.top().Queue()
			m.top().Close()
			m.stack = m.stack[:len(m.stack)-1]
			next, cmd := m.top().Update(shownMsg{from: from}) // on top again
			m.stack[len(m.stack)-1] = next
			return m, cmd
		}
		return m, nil
	case openDialogMsg:
		if m.dialog != nil {
			return m, nil // one at a time
		}
		if cmd := m.refuseSecond(msg.d); cmd != nil {
			return m, cmd
		}
		m.dialog = msg.d
		m.dialog.setWidth(m.c.width)
		return m, m.dialog.Init()
	case editReadyMsg:
		if m.dialog != msg.d && !slices.Contains(m.jobs, msg.d) {
			// Its dialog closed while the draft was prepared: nobody else
			// would remove the file, which holds the message's body.
			if msg.draft != nil {
				m.c.backend.DiscardEdit(msg.draft)
			}
			return m, nil
		}
	case backgroundMsg:
		return m, m.background(msg.d)
	case showJobMsg:
		return m, m.showJob(msg.d)
	case closeDialogMsg:
		isJob := slices.Contains(m.jobs, msg.d)
		if m.dialog != msg.d && !isJob {
			return m, nil
		}
		m.dismiss(msg.d)
		if m.dialog == msg.d {
			m.dialog = nil // and the screens hear of it (a paused list reloads)
		}
	case statusMsg:
		if msg.at.Before(m.statusAt) {
			return m, nil // overtaken by a newer line
		}
		m.status, m.kind, m.statusAt = msg.text, msg.kind, msg.at
		return m, nil
	case depthMsg:
		m.counted[msg.queue] = counted{n: msg.n, at: m.c.now()}
		return m, nil
	case queuesTickMsg:
		return m, tea.Batch(loadQueues(m.c), m.clusterCmd(), tickQueues(m.c))
	case queuesLoadedMsg:
		if msg.err == nil {
			m.queues = msg.rows
		}
		m.queuesErr = msg.err
	case clusterLoadedMsg:
		m.clusterLoading = false
		if msg.info.Conn.URL != "" || msg.err == nil {
			m.cluster = msg.info
		}
	}
	cmd := m.broadcast(msg)
	if q := m.quitWhenStopped(); q != nil {
		return m, q
	}
	return m, cmd
}

// broadcast gives a result message to the dialog and every screen; each
// ignores what it did not ask for (results carry the feed or dialog that
// asked). Screens below the top see them too, so a list keeps loading
// while a message is open.
func (m *Model) broadcast(msg tea.Msg) tea.Cmd {
	var cmds []tea.Cmd
	if m.dialog != nil {
		cmds = append(cmds, m.dialog.Update(msg))
	}
	for _, j := range m.jobs {
		if j != m.dialog {
			cmds = append(cmds, j.Update(msg))
		}
	}
	for i, s := range m.stack {
		next, cmd := s.Update(msg)
		m.stack[i] = next
		cmds = append(cmds, cmd)
	}
	return tea.Batch(cmds...)
}

func (m *Model) handleKey(msg tea.KeyMsg) tea.Cmd {
	// Keys typed faster than one read ("/amount" from a fast typist, a
	// paste, tmux send-keys) arrive as one message with several runes:
	// take them one at a time, so "/" starts the filter and the rest is
	// typed into it.
	if msg.Type == tea.KeyRunes && len(msg.Runes) > 1 {
		cmds := make([]tea.Cmd, 0, len(msg.Runes))
		for _, r := range msg.Runes {
			cmds = append(cmds, m.handleKey(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}, Alt: msg.Alt}))
		}
		return tea.Batch(cmds...)
	}
	k := m.c.keys
	if m.quitAsk {
		return m.quitKey(msg)
	}
	if key.Matches(msg, k.ForceQuit) {
		return m.quit()
	}
	if m.dialog != nil {
		return m.dialog.Update(msg)
	}
	if m.fullHelp {
		if key.Matches(msg, k.Help) || key.Matches(msg, k.Back) || key.Matches(msg, k.Quit) {
			m.fullHelp = false
		}
		m.scrollHelp(msg)
		return nil
	}
	if !m.top().Capturing() {
		switch {
		case key.Matches(msg, k.Quit):
			return m.quit()
		case key.Matches(msg, k.Help):
			m.fullHelp, m.helpTop = true, 0
			return nil
		case key.Matches(msg, k.Jobs):
			if _, on := m.top().(*jobsScreen); !on {
				return push(newJobsScreen(m.c, func() []*dialog { return m.jobs }))
			}
			return nil
		}
	}
	if m.kind == statusError && !m.top().Capturing() {
		// An error stays until the person does the next thing: then it
		// is old news (a bad filter's line must not outlive esc, g or an
		// opened group). A new error comes back with that thing's result.
		m.status, m.kind = "", statusInfo
	}
	next, cmd := m.top().Update(msg)
	m.stack[len(m.stack)-1] = next
	return cmd
}

// counted is a queue depth a browse counted, and when.
type counted struct {
	n  int
	at time.Time
}

// statsLag is how long the management API's message counts may lag (its
// default stats interval is 5s).
const statsLag = 6 * time.Second

// chrome is the lines around the body: title, status bar, message, help.
const chrome = 4

func (m *Model) resize(w, h int) {
	m.width, m.height = w, h
	m.c.width, m.c.height = w, max(h-chrome, 3)
	for _, s := range m.stack {
		s.SetSize(m.c.width, m.c.height)
	}
	if m.dialog != nil {
		m.dialog.setWidth(m.c.width)
	}
}
