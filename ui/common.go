package ui

import (
	"context"
	"time"

	"github.com/charmbracelet/bubbles/help"
	tea "github.com/charmbracelet/bubbletea"
)

// common is what every screen and dialog shares (soft-serve's
// common.Common, gh-dash's ProgramContext): the size of the body, the style
// sheet, the keys, the backend and the program's context. One value,
// passed down; no globals.
type common struct {
	ctx     context.Context
	backend Backend
	styles  *Styles
	keys    *KeyMap
	// width and height are the body's: the terminal minus the title,
	// status and help lines.
	width, height int

	now        func() time.Time
	editor     func(path string, done func(error) tea.Msg) tea.Cmd // runs $EDITOR on path
	exportDir  string                                              // where exports go by default
	describe   string                                              // the connection, for the status bar
	refresh    time.Duration                                       // queue depth refresh; negative: never
	searchKeep int                                                 // matches a search keeps (0: replay.DefaultSearchKeep)

	// workers counts goroutines that talk to the broker, so quitting can
	// wait until each has given its held messages back.
	workers *workers

	// jobOn is the running job acting on a queue, nil when none, and
	// jobQueues the queues running jobs act on (set by the root model,
	// jobs.go; called in Update only).
	jobOn     func(queue string) *dialog
	jobQueues func() []string
}

// busyQueues are the queues running jobs act on.
func (c *common) busyQueues() []string {
	if c.jobQueues == nil {
		return nil
	}
	return c.jobQueues()
}

// busy is the running job's line when a job acts on queue, "" otherwise:
// a browse of that queue would hold the messages the job's pass needs.
func (c *common) busy(queue string) string {
	if c.jobOn == nil || c.jobOn(queue) == nil {
		return ""
	}
	return "a job is acting on " + queue + " (J: jobs); its list loads again when the job ends"
}

// helpView renders one help.KeyMap with the shared styles.
func (c *common) helpView(k help.KeyMap, width int, full bool) string {
	h := help.New()
	h.Styles = c.styles.Help
	h.ShortSeparator = "  " // bold keys, dim text: two spaces fit more in 80 columns
	h.Width = width
	h.ShowAll = full
	return h.View(k)
}

// screen is one page of the navigation stack.
type screen interface {
	Init() tea.Cmd
	Update(msg tea.Msg) (screen, tea.Cmd)
	View() string
	// SetSize gives the screen the body's size (after a resize).
	SetSize(width, height int)
	// Title is the screen's part of the breadcrumb.
	Title() string
	// Queue is the queue the screen shows, for the status bar's depth.
	Queue() string
	// Capturing reports that the screen is reading text (a filter): the
	// global keys q and ? are typed, not obeyed.
	Capturing() bool
	// Close stops the screen's background work when it leaves the stack.
	Close()
	help.KeyMap
}

// Navigation and status messages, returned by screens and dialogs as
// commands and handled by the root model.
type (
	pushMsg        struct{ s screen }
	popMsg         struct{}
	openDialogMsg  struct{ d *dialog }
	closeDialogMsg struct{ d *dialog }
	statusMsg      struct {
		text string
		kind statusKind
	}
	// depthMsg is a queue's depth as a browse just counted it; the
	// management API's figures lag by up to its stats interval (5s).
	depthMsg struct {
		queue string
		n     int
	}
	// backgroundMsg sends a running dialog to the background (a job);
	// showJobMsg brings a job's dialog to the front.
	backgroundMsg   struct{ d *dialog }
	showJobMsg      struct{ d *dialog }
	refreshQueueMsg struct {
		queue   string // reload the screens showing queue
		removed bool   // some messages left it
	}
)

type statusKind int

const (
	statusInfo statusKind = iota
	statusOK
	statusWarn
	statusError
)

func push(s screen) tea.Cmd        { return func() tea.Msg { return pushMsg{s} } }
func pop() tea.Msg                 { return popMsg{} }
func openDialog(d *dialog) tea.Cmd { return func() tea.Msg { return openDialogMsg{d} } }
func status(kind statusKind, text string) tea.Cmd {
	return func() tea.Msg { return statusMsg{text: text, kind: kind} }
}
