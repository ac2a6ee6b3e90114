package ui

import (
	"time"

	"github.com/charmbracelet/bubbles/cursor"
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/progress"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/parkinglot/parkinglot/broker/store"
	"github.com/parkinglot/parkinglot/replay"
)

// dialogState is where a dialog is in its life.
type dialogState int

const (
	dlgPreparing dialogState = iota // edit: fetching the draft, $EDITOR open
	dlgConfirm                      // showing exactly what will happen
	dlgRunning                      // progress bar, cancel key
	dlgDone                         // the outcome, when something failed
	dlgCanaryAsk                    // a canary step ended, none came back: go on or stop?
)

// dialog confirms and runs one action: it shows what will happen, runs
// the action with a progress bar and a cancel key, and reports what was
// done. This is the part every action shares (the state machine, the
// progress, the result); what an action adds — its fields, its texts, its
// checks and the backend call — is its action (dialog_replay.go,
// dialog_edit.go, dialog_delete.go, dialog_export.go).
type dialog struct {
	c     *common
	act   action
	queue string
	what  string       // what is chosen, for people: "group “…” (12 messages)"
	ids   *store.IDSet // the ids of the rows chosen (nil for edit: id); closed with the dialog
	// n is how many messages the action takes: every message of the list
	// that carries a chosen id, since an id chooses each copy that carries
	// it. The title says it and the request is bound to it (Limit).
	n int
	// copies are those of the n that are outside the rows chosen (parked
	// twice): the dialog tells them.
	copies  int
	bulk    bool
	state   dialogState
	problem string // why enter did not start (bad destination, …)
	focus   int
	width   int

	run        *feed
	ev         replay.Event
	bar        progress.Model
	cancelling bool
	result     replay.Result
	err        error

	// background: a job (jobs.go); it keeps its result until dismissed.
	background bool
	started    time.Time // when the action began, for the ETA
}

// action is what one kind of dialog adds to the shared part. Each hook
// gets the dialog; actionBase gives the ones an action has no use for.
type action interface {
	name() string       // the action as a noun, for a job's line
	verb() string       // what was done to the messages, for the summary
	title(n int) string // the dialog's heading for n messages
	// begin starts what the action needs before it can confirm (Init).
	begin(d *dialog) tea.Cmd
	// fields are the action's text inputs, in tab order.
	fields() []*textinput.Model
	setWidth(inner int)
	// update sees every message and key first; handled stops the shared
	// handling.
	update(d *dialog, msg tea.Msg) (cmd tea.Cmd, handled bool)
	// request adds the action's fields to req; an error is shown as the
	// problem.
	request(d *dialog, req *ActionRequest) error
	// check runs before the action starts: a problem to show, or a
	// command to run instead (a preview of what changed); neither starts.
	check(d *dialog) (problem string, instead tea.Cmd)
	// start runs the action in a worker.
	start(d *dialog, req ActionRequest) (*feed, tea.Cmd)
	// lines are what the dialog shows in its state, between its heading
	// and its help.
	lines(d *dialog, inner int) []string
	// help is the help bar of the state; nil: the shared one.
	help(d *dialog) []key.Binding
	// finished sees the outcome before it is shown.
	finished(d *dialog)
	// removes: the action takes the messages out of the parking lot.
	removes() bool
	// adds: the action puts messages into the parking lot.
	adds() bool
	// savedTo is where the messages were written, "" when nowhere.
	savedTo() string
	// errorText words a failed run in place of the shared wording.
	errorText(d *dialog) (string, bool)
	// discard throws away what the action holds when the dialog closes.
	discard(d *dialog)
}

// actionBase is an action's hooks left at what most actions need.
type actionBase struct{}

func (actionBase) begin(*dialog) tea.Cmd                   { return nil }
func (actionBase) fields() []*textinput.Model              { return nil }
func (actionBase) setWidth(int)                            {}
func (actionBase) update(*dialog, tea.Msg) (tea.Cmd, bool) { return nil, false }
func (actionBase) request(*dialog, *ActionRequest) error   { return nil }
func (actionBase) check(*dialog) (string, tea.Cmd)         { return "", nil }
func (actionBase) help(*dialog) []key.Binding              { return nil }
func (actionBase) finished(*dialog)                        {}
func (actionBase) removes() bool                           { return true }
func (actionBase) adds() bool                              { return false }
func (actionBase) savedTo() string                         { return "" }
func (actionBase) errorText(*dialog) (string, bool)        { return "", false }
func (actionBase) discard(*dialog)                         {}

// newDialog is the shared part for n messages; the action's constructor
// fills in its own and calls opened.
func newDialog(c *common, queue, what string, ids *store.IDSet, n int) *dialog {
	d := &dialog{c: c, queue: queue, what: what, ids: ids, n: n}
	d.bulk = d.count() > 1
	d.bar = progress.New(progress.WithSolidFill(c.styles.ProgressFill), progress.WithColorProfile(c.styles.Profile))
	return d
}

// opened finishes a dialog once its action is set.
func (d *dialog) opened(act action, state dialogState) *dialog {
	d.act, d.state = act, state
	d.setWidth(d.c.width)
	d.focusField(0)
	return d
}

// newTextField is a dialog's text input: no prompt, a steady cursor.
func newTextField(placeholder string, limit int) textinput.Model {
	f := textinput.New()
	f.Prompt = ""
	f.Placeholder = placeholder
	f.CharLimit = limit
	f.Cursor.SetMode(cursor.CursorStatic)
	return f
}

// count is how many messages the dialog acts on.
func (d *dialog) count() int { return d.n }

func (d *dialog) setWidth(w int) {
	d.width = min(max(w-4, 30), 96)
	d.act.setWidth(d.width - 4 - 14) // border, padding and the field label
	d.bar.Width = max(d.width-4-24, 10)
}

// Init starts what the dialog needs before it can confirm.
func (d *dialog) Init() tea.Cmd { return d.act.begin(d) }

func (d *dialog) focusField(i int) tea.Cmd {
	fs := d.act.fields()
	if len(fs) == 0 {
		return nil
	}
	d.focus = (i + len(fs)) % len(fs)
	var cmd tea.Cmd
	for j, f := range fs {
		if j == d.focus {
			cmd = f.Focus()
		} else {
			f.Blur()
		}
	}
	return cmd
}

// tabKey moves the focus for the next and previous field keys and reports
// whether msg was one.
func (d *dialog) tabKey(msg tea.KeyMsg) (tea.Cmd, bool) {
	k := d.c.keys
	switch {
	case key.Matches(msg, k.NextField):
		return d.focusField(d.focus + 1), true
	case key.Matches(msg, k.PrevField):
		return d.focusField(d.focus - 1), true
	}
	return nil, false
}

// request builds the action from the dialog's fields.
func (d *dialog) request() (ActionRequest, error) {
	req := ActionRequest{Queue: d.queue, Select: replay.Selector{Chosen: d.ids}}
	if d.ids != nil {
		req.Limit = d.n // what the dialog said, not a copy parked since
	}
	err := d.act.request(d, &req)
	return req, err
}

func (d *dialog) Update(msg tea.Msg) tea.Cmd {
	if cmd, ok := d.act.update(d, msg); ok {
		return cmd
	}
	switch msg := msg.(type) {
	case feedEventMsg:
		if msg.f == d.run {
			d.ev = msg.ev
			return d.run.next()
		}
	case actionDoneMsg:
		if msg.f == d.run {
			return d.finished(msg)
		}
	case tea.KeyMsg:
		return d.handleKey(msg)
	}
	return nil
}

func (d *dialog) handleKey(msg tea.KeyMsg) tea.Cmd {
	k := d.c.keys
	switch d.state {
	case dlgRunning, dlgCanaryAsk:
		if key.Matches(msg, k.Background) {
			return func() tea.Msg { return backgroundMsg{d} }
		}
		if d.state == dlgRunning && key.Matches(msg, k.CancelRun) {
			d.cancelling = true
			d.run.cancel()
		}
	case dlgDone:
		if key.Matches(msg, k.Cancel) || key.Matches(msg, k.Confirm) {
			return d.close("", statusInfo)
		}
	case dlgConfirm:
		return d.confirmKey(msg)
	}
	return nil
}

func (d *dialog) confirmKey(msg tea.KeyMsg) tea.Cmd {
	k := d.c.keys
	switch {
	case key.Matches(msg, k.Cancel):
		return d.close("cancelled — nothing changed", statusInfo)
	case key.Matches(msg, k.Confirm):
		return d.confirm()
	}
	if cmd, ok := d.tabKey(msg); ok {
		return cmd
	}
	fs := d.act.fields()
	if len(fs) == 0 {
		return nil
	}
	var cmd tea.Cmd
	*fs[d.focus], cmd = fs[d.focus].Update(msg)
	d.problem = ""
	return cmd
}

// confirm starts the action — unless its check finds a problem, or what is
// on screen is not what would happen (then it previews).
func (d *dialog) confirm() tea.Cmd {
	req, err := d.request()
	if err != nil {
		d.problem = err.Error()
		return nil
	}
	if problem, instead := d.act.check(d); problem != "" || instead != nil {
		if problem != "" {
			d.problem = problem
		}
		return instead
	}
	d.state, d.ev, d.started = dlgRunning, replay.Event{Total: d.count()}, d.c.now()
	f, cmd := d.act.start(d, req)
	d.run = f
	return cmd
}
