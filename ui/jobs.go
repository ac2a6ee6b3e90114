package ui

import (
	"fmt"
	"slices"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/parkinglot/parkinglot/ui/format"
)

// Jobs. A running replay, edit, delete or export goes to the background
// with b: its dialog leaves the screen and the action goes on while the
// person browses, opens other queues or searches. The root model keeps
// the dialog, gives it its action's messages, shows the running jobs in
// the status bar and lists them on the jobs screen (J), where c cancels
// one and enter brings it back (a finished one shows its result, and
// closing it dismisses it).
//
// One job per parking lot: an action on a parking lot a job acts on is
// refused, and so is loading its list, because a pass of either would
// hold messages the job's own pass needs (they would stay parked, "no
// longer in the queue"). Refused rather than queued: a queued action
// would run on a parking lot the person no longer sees.
//
// Quitting with a job running asks first; yes cancels every job the way
// its cancel key does and quits once each has stopped, every message
// replayed or still parked.

// active reports whether the dialog's action still runs (a canary step
// waiting for an answer included).
func (d *dialog) active() bool { return d.state == dlgRunning || d.state == dlgCanaryAsk }

// cancelJob stops a job as its dialog would: a running one as its cancel
// key does, one waiting at a canary's question as answering stop does (the
// rest stay parked). It reports whether there was anything to stop.
func (d *dialog) cancelJob() bool {
	switch {
	case d.state == dlgCanaryAsk:
		r, ok := d.act.(*replayAction)
		if !ok {
			return false
		}
		r.cn.reply(d, false)
		return true
	case d.state == dlgRunning && d.run != nil && !d.cancelling:
		d.cancelling = true
		d.run.cancel()
		return true
	}
	return false
}

// jobOn is the running job acting on queue, nil when none.
func (m *Model) jobOn(queue string) *dialog {
	for _, j := range m.jobs {
		if j.queue == queue && j.active() {
			return j
		}
	}
	return nil
}

func (m *Model) activeJobs() int {
	n := 0
	for _, j := range m.running() {
		if j.active() {
			n++
		}
	}
	return n
}

// running is the jobs and the dialog on screen when it runs an action: a
// quit asks, stops and reports them alike.
func (m *Model) running() []*dialog {
	if d := m.dialog; d != nil && d.active() && !slices.Contains(m.jobs, d) {
		return append(slices.Clip(m.jobs), d)
	}
	return m.jobs
}

// background makes the dialog on screen a job.
func (m *Model) background(d *dialog) tea.Cmd {
	if !d.active() {
		return nil
	}
	if m.dialog == d {
		m.dialog = nil
	}
	d.background = true
	if !slices.Contains(m.jobs, d) {
		m.jobs = append(m.jobs, d)
	}
	return status(statusInfo, "the "+d.act.name()+" of "+d.queue+" goes on in the background — J: jobs")
}

// showJob brings a job's dialog to the front (one dialog at a time).
func (m *Model) showJob(d *dialog) tea.Cmd {
	if m.dialog != nil || !slices.Contains(m.jobs, d) {
		return nil
	}
	m.dialog = d
	d.setWidth(m.c.width)
	return nil
}

// dismiss forgets a job whose dialog closed.
func (m *Model) dismiss(d *dialog) {
	m.jobs = slices.DeleteFunc(m.jobs, func(j *dialog) bool { return j == d })
}

// refuseSecond refuses an action on a parking lot a job acts on.
func (m *Model) refuseSecond(d *dialog) tea.Cmd {
	j := m.jobOn(d.queue)
	if j == nil {
		return nil
	}
	d.abort()
	if d.ids != nil {
		_ = d.ids.Close()
	}
	return status(statusError, fmt.Sprintf("a %s job is acting on %s: one job per parking lot, its pass holds the messages another would need (J: jobs)",
		j.act.name(), d.queue))
}

// quitKey answers the quit question: yes cancels every job and quits once
// they stopped; no (or esc) stays.
func (m *Model) quitKey(msg tea.KeyMsg) tea.Cmd {
	k := m.c.keys
	switch {
	case key.Matches(msg, k.QuitYes), key.Matches(msg, k.ForceQuit):
		m.quitAsk, m.quitting = false, true
		if d := m.dialog; d != nil && d.active() && !slices.Contains(m.jobs, d) {
			m.stopped = d // its outcome is told with the jobs'
		}
		for _, j := range m.running() {
			if j.active() && j.run != nil {
				j.cancelling = true
				j.run.cancel()
			}
		}
		return m.quitWhenStopped()
	case key.Matches(msg, k.QuitNo):
		m.quitAsk = false
	}
	return nil
}

// quit quits, or asks first while a job runs.
func (m *Model) quit() tea.Cmd {
	if m.activeJobs() > 0 && !m.quitting {
		m.quitAsk = true
		return nil
	}
	return tea.Quit
}

// quitWhenStopped quits once a confirmed quit's jobs have all stopped.
func (m *Model) quitWhenStopped() tea.Cmd {
	if m.quitting && m.activeJobs() == 0 {
		return tea.Quit
	}
	return nil
}

// JobSummaries are the jobs' outcomes, for the terminal after the TUI
// ends: what each did, and what stayed parked.
func (m *Model) JobSummaries() []string {
	jobs := m.jobs
	if m.stopped != nil {
		jobs = append(slices.Clip(jobs), m.stopped)
	}
	out := make([]string, 0, len(jobs))
	for _, j := range jobs {
		if j.active() {
			out = append(out, fmt.Sprintf("%s of %s: stopped before its end, %d of %d done; every message is %s or still there; nothing lost",
				j.act.name(), j.queue, j.ev.Done, j.ev.Total, j.act.verb()))
			continue
		}
		text, _ := j.summary()
		out = append(out, j.queue+": "+text)
	}
	return out
}

// jobsLine is the status bar's word on the jobs: the first running one's
// progress (its parking lot is on the jobs screen), and how many more.
func (m *Model) jobsLine() string {
	var first *dialog
	n := 0
	for _, j := range m.jobs {
		if j.active() {
			if first == nil {
				first = j
			}
			n++
		}
	}
	switch {
	case first == nil && len(m.jobs) > 0:
		return fmt.Sprintf("%d job(s) done (J)", len(m.jobs))
	case first == nil:
		return ""
	case n > 1:
		return fmt.Sprintf("job: %s (+%d more, J)", first.shortProgress(), n-1)
	}
	return "job: " + first.shortProgress() + " (J)"
}

// shortProgress is a running job's action, count and ETA.
func (d *dialog) shortProgress() string {
	if d.state == dlgCanaryAsk {
		return d.act.name() + " waits for you"
	}
	line := fmt.Sprintf("%s %s/%s", d.act.name(), fmtCount(int64(d.ev.Done)), fmtCount(int64(d.ev.Total)))
	if eta, ok := d.eta(); ok && eta > 0 && !d.cancelling {
		line += " · ETA " + format.Age(eta)
	}
	return line
}

// progressLine is a job in one line: what, where, how far, the ETA.
func (d *dialog) progressLine() string {
	switch d.state {
	case dlgCanaryAsk:
		return fmt.Sprintf("%s %s: a canary step ended — waiting for you (enter on it)", d.act.name(), d.queue)
	case dlgDone:
		text, _ := d.summary()
		return "done: " + d.queue + ": " + text
	}
	line := fmt.Sprintf("%s %s %s/%s", d.act.name(), d.queue, fmtCount(int64(d.ev.Done)), fmtCount(int64(d.ev.Total)))
	if d.cancelling {
		return line + " — cancelling"
	}
	if eta, ok := d.eta(); ok && eta > 0 {
		line += " · ETA " + format.Age(eta)
	}
	return line
}

// eta is the time left at the rate so far.
func (d *dialog) eta() (time.Duration, bool) {
	if d.ev.Done <= 0 || d.ev.Total <= d.ev.Done || d.started.IsZero() {
		return 0, false
	}
	spent := d.c.now().Sub(d.started)
	return time.Duration(float64(spent) / float64(d.ev.Done) * float64(d.ev.Total-d.ev.Done)), true
}
