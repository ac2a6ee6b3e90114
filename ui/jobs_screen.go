package ui

import (
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/parkinglot/parkinglot/ui/format"
)

// jobsScreen lists the jobs (jobs.go): each one's action, parking lot,
// progress and ETA, or its result; c cancels the one under the cursor,
// enter brings it to the front (a finished one: its result, which closing
// dismisses).
type jobsScreen struct {
	c      *common
	jobs   func() []*dialog
	cursor int
	width  int
	height int
}

func newJobsScreen(c *common, jobs func() []*dialog) *jobsScreen {
	return &jobsScreen{c: c, jobs: jobs, width: c.width, height: c.height}
}

func (s *jobsScreen) Init() tea.Cmd   { return nil }
func (s *jobsScreen) Title() string   { return "jobs" }
func (s *jobsScreen) Queue() string   { return "" }
func (s *jobsScreen) Capturing() bool { return false }
func (s *jobsScreen) Close()          {}
func (s *jobsScreen) SetSize(w, h int) {
	s.width, s.height = w, h
}

func (s *jobsScreen) Update(msg tea.Msg) (screen, tea.Cmd) {
	km, ok := msg.(tea.KeyMsg)
	if !ok {
		return s, nil
	}
	jobs := s.jobs()
	s.cursor = min(s.cursor, max(len(jobs)-1, 0))
	k := s.c.keys
	switch {
	case key.Matches(km, k.Back):
		return s, pop
	case key.Matches(km, k.Up):
		s.cursor = max(s.cursor-1, 0)
	case key.Matches(km, k.Down):
		s.cursor = min(s.cursor+1, max(len(jobs)-1, 0))
	case len(jobs) == 0:
	case key.Matches(km, k.Open):
		j := jobs[s.cursor]
		return s, func() tea.Msg { return showJobMsg{j} }
	case key.Matches(km, k.CancelJob):
		j := jobs[s.cursor]
		asked := j.state == dlgCanaryAsk
		if !j.cancelJob() {
			return s, nil
		}
		if asked {
			return s, status(statusInfo, "stopping the "+j.act.name()+" of "+j.queue+" after its canary step: the rest stay parked")
		}
		return s, status(statusInfo, "cancelling the "+j.act.name()+" of "+j.queue+": what is in flight is confirmed or stays parked")
	}
	return s, nil
}

func (s *jobsScreen) View() string {
	st := s.c.styles
	jobs := s.jobs()
	if len(jobs) == 0 {
		return st.Dim.Render("No job. b in a running action's dialog sends it here and lets you browse meanwhile.")
	}
	lines := make([]string, 0, len(jobs))
	for i, j := range jobs {
		line := j.progressLine()
		marker := "  "
		if i == s.cursor {
			marker = "▸ "
		}
		style := st.Info
		switch {
		case j.state == dlgDone && (j.err != nil || j.result.Failed > 0):
			style = st.Warning
		case j.state == dlgDone:
			style = st.OK
		}
		lines = append(lines, format.Cut(marker+style.Render(clean(line)), s.width))
	}
	return strings.Join(lines, "\n")
}

func (s *jobsScreen) ShortHelp() []key.Binding {
	k := s.c.keys
	return []key.Binding{described(k.Open, "open"), k.CancelJob, k.Back, k.Quit}
}

func (s *jobsScreen) FullHelp() [][]key.Binding {
	k := s.c.keys
	return [][]key.Binding{{k.Up, k.Down}, {described(k.Open, "open; a finished job: its result, dismissed on close"), k.CancelJob},
		{k.Back, k.Help, k.Quit, k.ForceQuit},
		{described(k.QuitYes, "quitting while a job runs: quit and stop the jobs"), described(k.QuitNo, "quitting while a job runs: stay")}}
}
