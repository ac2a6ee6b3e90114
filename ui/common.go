package ui

import (
	"context"
	"slices"
	"time"

	"github.com/charmbracelet/bubbles/help"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/parkinglot/parkinglot/broker/body"
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
	lastExport string                                              // the file this session last exported to, offered by import
	describe   string                                              // the connection, for the status bar
	refresh    time.Duration                                       // queue depth refresh; negative: never
	searchKeep int                                                 // matches a search keeps (0: replay.DefaultSearchKeep)
	bodies     *body.Reader                                        // reads bodies with the configured schemas (nil: by their properties)

	// workers counts goroutines that talk to the broker, so quitting can
	// wait until each has given its held messages back.
	workers *workers

	// jobOn is the running job acting on a queue, nil when none, and
	// jobQueues the queues running jobs act on (set by the root model,
	// jobs.go; called in Update only).
	jobOn     func(queue string) *dialog
	jobQueues func() []string

	// reads is, per queue, the give-back of the last read started on it
	// (a browse, a plan, an action's pass, an edit's fetch): AMQP has no
	// peek, so two reads at once each miss what the other holds. Used in
	// Update only (turn).
	reads map[string]chan struct{}

	// liveNoManagementSaid: a list said once this session that it has no
	// live arrivals without the management API (Update only).
	liveNoManagementSaid bool
}

// turn queues a read of queue behind the one started before it: the read
// waits for after (nil: none) to be closed — the previous read gave every
// message back — and closes done once it has given its own back. Cancel
// the previous read first, or this one waits for it to end.
func (c *common) turn(queue string) (after <-chan struct{}, done chan struct{}) {
	if c.reads == nil {
		c.reads = map[string]chan struct{}{}
	}
	if prev, ok := c.reads[queue]; ok {
		after = prev
	}
	done = make(chan struct{})
	c.reads[queue] = done
	return after, done
}

// readsUnderWay are the give-backs of the last read started on each
// queue but those skipped (closed ones included): a search, which reads
// many queues, waits for them; it skips the queues jobs act on.
func (c *common) readsUnderWay(skip []string) []chan struct{} {
	out := make([]chan struct{}, 0, len(c.reads))
	for q, done := range c.reads {
		if !slices.Contains(skip, q) {
			out = append(out, done)
		}
	}
	return out
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
