package ui

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/parkinglot/parkinglot/replay"
)

// searchRun is one search across the parking lots in a worker goroutine,
// carried into Update the way a feed carries a browse: the worker keeps
// at most keep matches in all (the rest are counted), and next hands over
// what arrived since the last call.
type searchRun struct {
	cancel context.CancelFunc
	keep   int
	skip   []string      // parking lots a job acted on when it began: not read
	wake   chan struct{} // capacity 1: "something is pending"
	done   chan struct{} // closed once the worker gave every message back

	mu        sync.Mutex
	queue     string // the queue being searched
	begun     int    // queues begun
	kept      int    // matches kept, handed over or not
	matched   int    // every match so far
	fresh     []replay.SearchMatch
	changed   bool
	final     *searchDoneMsg
	delivered bool
	abandoned bool
}

type (
	// searchProgressMsg is what a search found since the last one.
	searchProgressMsg struct {
		run     *searchRun
		queue   string
		begun   int
		matched int
		matches []replay.SearchMatch
	}
	// searchDoneMsg ends a search; every message it held is back.
	searchDoneMsg struct {
		run *searchRun
		res replay.SearchResult
		err error
	}
)

func (r *searchRun) poke() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

func (r *searchRun) onQueue(q string) {
	r.mu.Lock()
	r.queue, r.changed = q, true
	r.begun++
	r.mu.Unlock()
	r.poke()
}

func (r *searchRun) onMatch(q string, s replay.Summary) {
	r.mu.Lock()
	r.matched++
	if r.kept < r.keep {
		r.kept++
		r.fresh = append(r.fresh, replay.SearchMatch{Queue: q, Summary: s})
	}
	r.changed = true
	r.mu.Unlock()
	r.poke()
}

func (r *searchRun) finish(msg searchDoneMsg) {
	r.mu.Lock()
	r.final = &msg
	r.mu.Unlock()
	r.poke()
}

// stop cancels the search; its searchDoneMsg still comes, once every held
// message is given back.
func (r *searchRun) stop() { r.cancel() }

// abandon cancels the search for a screen that is gone: nothing more is
// delivered.
func (r *searchRun) abandon() {
	r.cancel()
	r.mu.Lock()
	r.abandoned = true
	r.fresh = nil
	r.mu.Unlock()
	r.poke()
}

// next waits for what the worker produced since the last call.
func (r *searchRun) next() tea.Cmd {
	return func() tea.Msg {
		for {
			r.mu.Lock()
			switch {
			case r.abandoned || r.delivered:
				r.mu.Unlock()
				return nil
			case r.changed:
				m := searchProgressMsg{run: r, queue: r.queue, begun: r.begun, matched: r.matched, matches: r.fresh}
				r.fresh, r.changed = nil, false
				r.mu.Unlock()
				return m
			case r.final != nil:
				r.delivered = true
				m := *r.final
				r.mu.Unlock()
				return m
			}
			r.mu.Unlock()
			<-r.wake
		}
	}
}

// startSearch begins a search for q once the search before it (nil: none)
// gave its messages back; the screen re-arms run.next() after each
// progress message until the searchDoneMsg.
func startSearch(c *common, q replay.Query, queues []string, before *searchRun) (*searchRun, tea.Cmd) {
	ctx, cancel := context.WithCancel(c.ctx)
	skip := c.busyQueues()         // read here, in Update: the jobs are the root model's
	reads := c.readsUnderWay(skip) // a list left for the search may still be giving back
	r := &searchRun{cancel: cancel, keep: c.searchCap(), skip: skip, wake: make(chan struct{}, 1), done: make(chan struct{})}
	start := func() tea.Msg {
		if before != nil {
			<-before.done
		}
		for _, done := range reads {
			if !waitTurn(ctx, done) {
				break // cancelled: Search returns at once
			}
		}
		if !c.workers.begin() {
			close(r.done)
			return nil
		}
		go func() {
			defer close(r.done)
			defer c.workers.end()
			defer cancel()
			// The engine keeps none: the run keeps up to keep, the screen
			// shows them, and one copy of each is in memory.
			res, err := c.backend.Search(ctx, SearchRequest{Queues: queues, Query: q, Keep: -1, OnQueue: r.onQueue, OnMatch: r.onMatch, Skip: skip})
			r.finish(searchDoneMsg{run: r, res: res, err: err})
		}()
		return r.next()()
	}
	return r, start
}

// searchCap is how many matches a search keeps to show.
func (c *common) searchCap() int {
	if c.searchKeep > 0 {
		return c.searchKeep
	}
	return replay.DefaultSearchKeep
}

// searchBase is what a search of some queues again keeps of the search
// before: the other queues' counts.
type searchBase struct {
	matched int
	queues  []replay.QueueSearch
}

// searchScreen is a search across every parking lot: its matches stream
// in queue by queue; enter opens one in its queue's list.
type searchScreen struct {
	c     *common
	expr  string
	query replay.Query

	run     *searchRun
	running bool
	queue   string // the queue being searched
	begun   int    // queues begun
	matches []replay.SearchMatch
	matched int // every match, kept or not
	res     *replay.SearchResult
	err     error
	stopped bool // ended early to open a match
	// stale are searched queues an action changed since (matches may be
	// gone, or new); kept is what a search of only those builds on.
	stale   map[string]bool
	kept    searchBase
	away    bool                // another screen is on top
	opening *replay.SearchMatch // to open once the stopped search gave back
	idWidth int                 // the widest id and queue kept
	qWidth  int
	list    vlist
	width   int
	height  int
}

func newSearchScreen(c *common, expr string) *searchScreen {
	s := &searchScreen{c: c, expr: expr, query: replay.ParseQuery(expr), stale: map[string]bool{}}
	s.SetSize(c.width, c.height)
	return s
}

func (s *searchScreen) Init() tea.Cmd { return s.start() }

// start runs the search afresh.
func (s *searchScreen) start() tea.Cmd {
	before := s.run
	if before != nil {
		before.abandon()
	}
	s.matches, s.matched, s.res, s.err = nil, 0, nil, nil
	s.queue, s.begun, s.stopped, s.opening = "", 0, false, nil
	s.idWidth, s.qWidth = 0, 0
	s.kept = searchBase{}
	clear(s.stale)
	s.list.setCount(0)
	r, cmd := startSearch(s.c, s.query, nil, before)
	s.run, s.running = r, true
	return cmd
}

// searchAgain searches again, alone, the queues an action changed while
// the results were under it: their matches may have left, the others'
// have not. Nothing is searched while a search runs or before one ended.
func (s *searchScreen) searchAgain() tea.Cmd {
	if len(s.stale) == 0 || s.running || s.res == nil {
		return nil
	}
	var again []string
	base := searchBase{matched: s.matched}
	for _, qs := range s.res.Queues {
		if s.stale[qs.Queue] && (qs.Err == nil || errors.Is(qs.Err, replay.ErrSearchSkipped)) {
			again = append(again, qs.Queue)
			base.matched -= qs.Matched
			continue
		}
		base.queues = append(base.queues, qs)
	}
	clear(s.stale)
	if len(again) == 0 {
		return nil
	}
	s.matches = slices.DeleteFunc(s.matches, func(m replay.SearchMatch) bool { return slices.Contains(again, m.Queue) })
	s.list.setCount(len(s.matches))
	s.kept, s.matched, s.res, s.err, s.stopped = base, base.matched, nil, nil, false
	r, cmd := startSearch(s.c, s.query, again, s.run)
	s.run, s.running = r, true
	return tea.Batch(cmd, status(statusInfo, "searching again what changed: "+strings.Join(again, ", ")))
}

// skipped: q was left out of the search because an action worked on it;
// once that action ends, it can be searched.
func (s *searchScreen) skipped(q string) bool {
	if s.run != nil && slices.Contains(s.run.skip, q) {
		return true
	}
	queues := s.kept.queues
	if s.res != nil {
		queues = s.res.Queues
	}
	return slices.ContainsFunc(queues, func(qs replay.QueueSearch) bool {
		return qs.Queue == q && errors.Is(qs.Err, replay.ErrSearchSkipped)
	})
}

func (s *searchScreen) Title() string   { return "search " + clean(s.expr) }
func (s *searchScreen) Queue() string   { return "" }
func (s *searchScreen) Capturing() bool { return false }

func (s *searchScreen) Close() {
	if s.run != nil {
		s.run.abandon()
		s.run = nil
	}
	s.running = false
}

func (s *searchScreen) SetSize(w, h int) {
	s.width, s.height = w, h
	s.fit()
}

// fit gives the rows what the lines above them leave.
func (s *searchScreen) fit() { s.list.setHeight(s.height - len(s.headLines()) - 1) }

func (s *searchScreen) Update(msg tea.Msg) (screen, tea.Cmd) {
	switch msg := msg.(type) {
	case searchProgressMsg:
		if msg.run != s.run {
			return s, nil
		}
		s.queue, s.begun, s.matched = msg.queue, msg.begun, s.kept.matched+msg.matched
		for _, m := range msg.matches {
			s.idWidth = max(s.idWidth, ansi.StringWidth(clean(m.Summary.ID)))
			s.qWidth = max(s.qWidth, ansi.StringWidth(clean(m.Queue)))
		}
		s.matches = append(s.matches, msg.matches...)
		s.list.setCount(len(s.matches))
		s.fit() // a line for the cap once it is reached
		return s, s.run.next()
	case searchDoneMsg:
		if msg.run != s.run {
			return s, nil
		}
		s.running = false
		res := msg.res
		res.Queues = append(slices.Clip(s.kept.queues), res.Queues...)
		s.res, s.err = &res, msg.err
		if msg.err != nil && len(res.Queues) == 0 {
			s.res = nil // nothing searched: the parking lots were not listed
		}
		s.matched = max(s.matched, s.kept.matched+res.Matched)
		s.fit()
		if s.opening != nil {
			m := *s.opening
			s.opening = nil
			return s, s.openMatch(m)
		}
		if s.stopped {
			return s, nil
		}
		if len(s.stale) > 0 && !s.away {
			// An action changed a queue while this search ran: it may
			// have been searched before the change.
			return s, tea.Batch(s.doneStatus(), s.searchAgain())
		}
		return s, s.doneStatus()
	case refreshQueueMsg:
		if msg.removed || msg.added || s.skipped(msg.queue) {
			s.stale[msg.queue] = true
		}
		if !s.away {
			// The action ended with the results in view (a job, or the
			// dialog closed just before its queue's list did).
			return s, s.searchAgain()
		}
	case coveredMsg:
		s.away = true
	case shownMsg:
		s.away = false
		return s, s.searchAgain()
	case tea.KeyMsg:
		return s, s.handleKey(msg)
	}
	return s, nil
}

// doneStatus says what could not be searched.
func (s *searchScreen) doneStatus() tea.Cmd {
	if s.res != nil {
		for _, qs := range s.res.Queues {
			if qs.Err != nil {
				return status(statusWarn, qs.Queue+": not searched: "+qs.Err.Error())
			}
		}
	}
	if s.err == nil {
		return nil
	}
	return status(statusError, "search: "+s.err.Error())
}

func (s *searchScreen) handleKey(msg tea.KeyMsg) tea.Cmd {
	k := s.c.keys
	switch {
	case s.list.navigate(k, msg):
	case key.Matches(msg, k.Refresh):
		return s.start()
	case key.Matches(msg, k.Back):
		return pop
	case key.Matches(msg, k.Open):
		if s.list.cursor >= len(s.matches) {
			return nil
		}
		m := s.matches[s.list.cursor]
		if s.running {
			// The search may hold messages of the queue to open: stop it
			// and open the queue once it gave them back.
			s.stopped, s.opening = true, &m
			s.run.stop()
			return nil
		}
		return s.openMatch(m)
	}
	return nil
}

// openMatch opens the match's queue, on the message.
func (s *searchScreen) openMatch(m replay.SearchMatch) tea.Cmd {
	s.away = true // now, not when the push arrives: nothing searches its queue meanwhile
	return push(newMessagesScreenOn(s.c, m.Queue, m.Summary.ID))
}
