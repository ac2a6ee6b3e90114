package ui

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/cursor"
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/progress"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/parkinglot/parkinglot/broker/store"
	"github.com/parkinglot/parkinglot/replay"
	"github.com/parkinglot/parkinglot/retrycore"
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

// dialog confirms and runs one action: it shows the plan (resolved origin,
// its source, the route preview and warnings), takes another destination
// or a rate, runs the action with a progress bar and a cancel key, and
// reports what was done.
type dialog struct {
	c     *common
	kind  actionKind
	queue string
	what  string       // what is chosen, for people: "group “…” (12 messages)"
	ids   *store.IDSet // exactly the messages chosen (nil for edit: id); closed with the dialog
	id    string       // edit: the one message
	bulk  bool
	// shared counts chosen rows whose id another chosen row has too: the
	// backend acts on one copy per id.
	shared int
	state  dialogState

	plan     *Plan
	planErr  error
	planning bool
	planSeq  int
	planned  string // the destination text and target the plan is for
	problem  string // why enter did not start (bad destination, …)

	dest      textinput.Model
	rate      textinput.Model
	rateFrom  string // the configured rate the field was filled with, "" when none
	path      textinput.Model
	onlyQueue bool
	focus     int
	cn        canaryPart // a bulk replay's canary (dialog_canary.go)

	run        *feed
	ev         replay.Event
	bar        progress.Model
	cancelling bool
	result     replay.Result
	err        error

	draft *EditDraft
	width int

	// background: a job (jobs.go); it keeps its result until dismissed.
	background bool
	started    time.Time // when the action began, for the ETA
}

func newDialog(c *common, kind actionKind, queue, what string, ids *store.IDSet) *dialog {
	d := &dialog{c: c, kind: kind, queue: queue, what: what, ids: ids}
	d.bulk = d.count() > 1
	d.dest = textinput.New()
	d.dest.Prompt = ""
	d.dest.Placeholder = "EXCHANGE:ROUTING_KEY (empty: the origin above)"
	d.dest.CharLimit = 512
	d.rate = textinput.New()
	d.rate.Prompt = ""
	d.rate.Placeholder = "messages/s (empty: no limit)"
	d.rate.CharLimit = 12
	d.path = textinput.New()
	d.path.Prompt = ""
	d.path.CharLimit = 4096
	for _, f := range []*textinput.Model{&d.dest, &d.rate, &d.path} {
		f.Cursor.SetMode(cursor.CursorStatic)
	}
	d.cn.init()
	d.bar = progress.New(progress.WithSolidFill(c.styles.ProgressFill), progress.WithColorProfile(c.styles.Profile))
	d.setWidth(c.width)
	if kind == actionExport {
		name := fmt.Sprintf("%s-%s.jsonl", strings.NewReplacer("/", "_", " ", "_").Replace(queue), c.now().Format("20060102-150405"))
		dir := c.exportDir
		if dir == "" {
			dir = "." // shown as ./name: plainly relative to where parkinglot runs
		}
		d.path.SetValue(dir + string(filepath.Separator) + name)
	}
	if kind == actionReplay {
		// The parking lot's configured rate, as the CLI applies it.
		if r := c.backend.ParkingLotDefaults(queue).Rate; r > 0 {
			d.rateFrom = strconv.FormatFloat(r, 'f', -1, 64)
			d.rate.SetValue(d.rateFrom)
		}
	}
	if kind == actionDelete || kind == actionExport {
		d.state = dlgConfirm
	}
	d.focusField(0)
	return d
}

// count is how many messages the dialog acts on (distinct ids).
func (d *dialog) count() int {
	if d.ids == nil {
		return 1 // edit
	}
	return d.ids.Len()
}

func newReplayDialog(c *common, queue, what string, ids *store.IDSet) *dialog {
	return newDialog(c, actionReplay, queue, what, ids)
}

func newEditDialog(c *common, queue, id string) *dialog {
	d := newDialog(c, actionEdit, queue, "message "+clean(id), nil)
	d.id = id
	return d
}

func newDeleteDialog(c *common, queue, what string, ids *store.IDSet) *dialog {
	return newDialog(c, actionDelete, queue, what, ids)
}

func newExportDialog(c *common, queue, what string, ids *store.IDSet) *dialog {
	return newDialog(c, actionExport, queue, what, ids)
}

func (d *dialog) setWidth(w int) {
	d.width = min(max(w-4, 30), 96)
	inner := d.width - 4 - 14 // border, padding and the field label
	d.dest.Width, d.rate.Width, d.path.Width = inner, inner, inner
	d.cn.steps.Width, d.cn.wait.Width = inner, inner
	d.bar.Width = max(d.width-4-24, 10)
}

// Init starts what the dialog needs before it can confirm.
func (d *dialog) Init() tea.Cmd {
	switch d.kind {
	case actionReplay:
		d.state = dlgConfirm
		return d.replan()
	case actionEdit:
		d.state = dlgPreparing
		return prepareEdit(d.c, d, d.queue, d.id)
	}
	return nil
}

// fields are the dialog's text inputs, in tab order.
func (d *dialog) fields() []*textinput.Model {
	switch d.kind {
	case actionReplay:
		if d.bulk {
			return []*textinput.Model{&d.dest, &d.rate, &d.cn.steps, &d.cn.wait}
		}
		return []*textinput.Model{&d.dest}
	case actionEdit:
		return []*textinput.Model{&d.dest}
	case actionExport:
		return []*textinput.Model{&d.path}
	}
	return nil
}

func (d *dialog) focusField(i int) tea.Cmd {
	fs := d.fields()
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

// request builds the action from the dialog's fields.
func (d *dialog) request() (ActionRequest, error) {
	req := ActionRequest{Queue: d.queue, Select: replay.Selector{Chosen: d.ids}}
	if d.ids == nil {
		req.Select = replay.Selector{IDs: []string{d.id}}
	}
	if d.onlyQueue {
		req.Target = replay.TargetQueue
	}
	if s := strings.TrimSpace(d.dest.Value()); s != "" {
		dest, err := retrycore.ParseDestination(s)
		if err != nil {
			return req, err
		}
		req.To = &dest
	}
	// The engine's one rule, as on the command line: a typed destination
	// and "the failed queue alone" exclude each other.
	if err := replay.CheckDestination(req.To, req.Target); errors.Is(err, replay.ErrTwoDestinations) {
		return req, fmt.Errorf("%w: clear the destination, or press %s to send there instead of the failed queue", replay.ErrTwoDestinations, d.c.keys.ToggleTarget.Help().Key)
	}
	if s := strings.TrimSpace(d.rate.Value()); s != "" && d.bulk {
		r, err := strconv.ParseFloat(s, 64)
		if err != nil || r < 0 {
			return req, fmt.Errorf("rate %q: want messages per second, such as 50", s)
		}
		req.Rate = r
	}
	if d.kind == actionReplay && d.bulk {
		steps, wait, err := d.cn.parse()
		if err != nil {
			return req, err
		}
		req.Canary, req.CanaryWait = steps, wait
	}
	return req, nil
}

func (d *dialog) planKey() string {
	return strings.TrimSpace(d.dest.Value()) + "\x00" + strconv.FormatBool(d.onlyQueue)
}

// replan asks for the plan of what the fields say now.
func (d *dialog) replan() tea.Cmd {
	req, err := d.request()
	d.planned = d.planKey()
	d.planSeq++
	if err != nil {
		d.plan, d.planErr, d.planning = nil, err, false
		return nil
	}
	d.planning, d.problem = true, ""
	return loadPlan(d.c, d, d.planSeq, req)
}

func (d *dialog) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case planMsg:
		if msg.d == d && msg.seq == d.planSeq {
			d.planning = false
			d.plan, d.planErr = &msg.plan, msg.err
			if msg.err != nil {
				d.plan = nil
			}
		}
	case editReadyMsg:
		if msg.d == d {
			return d.draftReady(msg)
		}
	case editorDoneMsg:
		if msg.d == d {
			if msg.err != nil {
				d.state, d.err = dlgDone, fmt.Errorf("editor: %w", msg.err)
				return nil
			}
			d.state, d.err = dlgConfirm, nil
			return tea.Batch(d.replan(), d.focusField(0))
		}
	case feedEventMsg:
		if msg.f == d.run {
			d.ev = msg.ev
			return d.run.next()
		}
	case feedCanaryMsg:
		if msg.f == d.run {
			return tea.Batch(d.canaryUpdate(msg.u), d.run.next())
		}
	case canaryTickMsg:
		if msg.d == d {
			return d.canaryTick()
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

func (d *dialog) draftReady(msg editReadyMsg) tea.Cmd {
	if msg.err != nil {
		d.state, d.err = dlgDone, fmt.Errorf("prepare edit: %w", msg.err)
		return nil
	}
	d.draft = msg.draft
	return d.openEditor()
}

func (d *dialog) openEditor() tea.Cmd {
	d.state, d.err = dlgPreparing, nil
	return d.c.editor(d.draft.Path, func(err error) tea.Msg { return editorDoneMsg{d: d, err: err} })
}

func (d *dialog) handleKey(msg tea.KeyMsg) tea.Cmd {
	k := d.c.keys
	switch d.state {
	case dlgPreparing:
		if key.Matches(msg, k.Cancel) {
			return d.close("edit cancelled — nothing changed", statusInfo)
		}
	case dlgRunning:
		if key.Matches(msg, k.Background) {
			return func() tea.Msg { return backgroundMsg{d} }
		}
		if key.Matches(msg, k.CancelRun) {
			d.cancelling = true
			d.run.cancel()
		}
	case dlgDone:
		switch {
		case d.kind == actionEdit && d.draft != nil && key.Matches(msg, k.EditAgain):
			return d.openEditor()
		case key.Matches(msg, k.Cancel), key.Matches(msg, k.Confirm):
			return d.close("", statusInfo)
		}
	case dlgConfirm:
		return d.confirmKey(msg)
	case dlgCanaryAsk:
		if key.Matches(msg, k.Background) {
			return func() tea.Msg { return backgroundMsg{d} }
		}
		return d.canaryKey(msg)
	}
	return nil
}

func (d *dialog) confirmKey(msg tea.KeyMsg) tea.Cmd {
	k := d.c.keys
	switch {
	case key.Matches(msg, k.Cancel):
		return d.close("cancelled — nothing changed", statusInfo)
	case key.Matches(msg, k.NextField), key.Matches(msg, k.PrevField):
		step := 1
		if key.Matches(msg, k.PrevField) {
			step = -1
		}
		cmd := d.focusField(d.focus + step)
		if d.usesPlan() && d.planKey() != d.planned {
			return tea.Batch(cmd, d.replan())
		}
		return cmd
	case key.Matches(msg, k.ToggleTarget) && d.usesPlan():
		d.onlyQueue = !d.onlyQueue
		return d.replan()
	case key.Matches(msg, k.Confirm):
		return d.confirm()
	}
	fs := d.fields()
	if len(fs) == 0 {
		return nil
	}
	var cmd tea.Cmd
	*fs[d.focus], cmd = fs[d.focus].Update(msg)
	d.problem = ""
	return cmd
}

func (d *dialog) usesPlan() bool { return d.kind == actionReplay || d.kind == actionEdit }

// confirm starts the action — unless what is on screen is not what would
// happen (a destination typed but not yet previewed), then it previews.
func (d *dialog) confirm() tea.Cmd {
	req, err := d.request()
	if err != nil {
		d.problem = err.Error()
		return nil
	}
	path := strings.TrimSpace(d.path.Value())
	switch {
	case d.usesPlan() && d.planning:
		d.problem = "still resolving the route; confirm once it is shown"
		return nil
	case d.usesPlan() && d.planKey() != d.planned:
		return d.replan()
	case d.usesPlan() && d.plan == nil:
		d.problem = "no plan: see the error above; type a destination or press esc"
		return nil
	case d.usesPlan() && d.plan.Messages == 0:
		d.problem = "nothing would be sent: type a destination (EXCHANGE:ROUTING_KEY) or press esc"
		return nil
	case d.kind == actionExport && path == "":
		d.problem = "type the file to export to"
		return nil
	}
	d.state, d.ev, d.started = dlgRunning, replay.Event{Total: d.count()}, d.c.now()
	d.armCanary(&req)
	f, cmd := startAction(d.c, d.kind, req, path, d.draft)
	d.run = f
	return cmd
}
