package ui

import (
	"time"

	"github.com/charmbracelet/bubbles/help"
	tea "github.com/charmbracelet/bubbletea"
)

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
		// at is when the line was decided (in Update): commands run
		// concurrently, so a line can arrive after a newer one.
		at time.Time
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
		added   bool   // some messages came into it (an import)
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
	at := time.Now()
	return func() tea.Msg { return statusMsg{text: text, kind: kind, at: at} }
}
