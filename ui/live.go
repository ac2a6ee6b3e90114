package ui

import (
	"context"
	"errors"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/replay"
)

// live is a tail of one parking lot while its message list is open:
// arrivals stream to the screen as arrivalMsg, the lot untouched
// (Backend.Tail).
type live struct {
	queue  string
	cancel context.CancelFunc
	ch     chan replay.Summary
	ready  chan struct{}
	ended  chan error
	gaps   chan replay.TailGap
	// live: the tap is open, every arrival from now on is seen.
	live bool
	// newIDs are the ids of the messages that arrived since the list
	// opened (marked +), n how many arrived.
	newIDs map[string]bool
	n      int
	// back: how many of them came back from a replay (a replay job's
	// messages failing again show here as they arrive).
	back int
}

// arrivalMsg is one message that entered the lot; liveEndedMsg says the
// tail ended (err nil: the screen closed it).
type (
	arrivalMsg struct {
		l *live
		s replay.Summary
	}
	liveEndedMsg struct {
		l   *live
		err error
	}
	liveReadyMsg struct{ l *live }
	// liveGapMsg: the tail lost its connection and tapped the lot again.
	liveGapMsg struct {
		l   *live
		gap replay.TailGap
	}
)

// maxMarked bounds the ids remembered as new; past it arrivals are only
// counted.
const maxMarked = 100_000

// startLive tails queue in the background.
func startLive(c *common, queue string) (*live, tea.Cmd) {
	ctx, cancel := context.WithCancel(c.ctx)
	l := &live{queue: queue, cancel: cancel, ch: make(chan replay.Summary, 256), ready: make(chan struct{}, 1), ended: make(chan error, 1), gaps: make(chan replay.TailGap, 1), newIDs: map[string]bool{}}
	go func() {
		l.ended <- c.backend.Tail(ctx, queue, func() { l.ready <- struct{}{} }, func(s replay.Summary) {
			select {
			case l.ch <- s:
			case <-ctx.Done():
			}
		}, func(g replay.TailGap) {
			select {
			case l.gaps <- g:
			case <-ctx.Done():
			}
		})
	}()
	return l, l.next()
}

// next waits for the next arrival, or the tail's end.
func (l *live) next() tea.Cmd {
	return func() tea.Msg {
		select {
		case <-l.ready:
			return liveReadyMsg{l}
		case s := <-l.ch:
			return arrivalMsg{l, s}
		case g := <-l.gaps:
			return liveGapMsg{l, g}
		case err := <-l.ended:
			return liveEndedMsg{l, err}
		}
	}
}

// arrived notes an arrival.
func (l *live) arrived(s replay.Summary) {
	l.n++
	if s.Facts.CameBack {
		l.back++
	}
	if len(l.newIDs) < maxMarked {
		l.newIDs[s.ID] = true
	}
}

func (l *live) stop() { l.cancel() }

// liveReload is the least time between two reloads of the list for
// arrivals, and liveReloadMax the most messages a list reloads itself for
// (a larger one says how many arrived: ctrl+r lists them).
const (
	liveReload    = 2 * time.Second
	liveReloadMax = 10_000
)

// liveEndedText says why a list shows no arrivals.
func liveEndedText(queue string, err error) string {
	if errors.Is(err, broker.ErrUntappable) {
		return "no live arrivals for " + queue + ": only the default exchange routes to it, and no copy of that can be bound"
	}
	return "live arrivals for " + queue + " ended: " + err.Error()
}

// reloadsForArrivals: the list reloads itself for arrivals, unless it is
// over liveReloadMax or the lot is a quorum queue with a finite (or
// unknown) delivery limit, where each pass holds messages a lost
// connection counts against (README, Browsing without harm): arrivals are
// only counted there, and ctrl+r lists them.
func (m *messagesScreen) reloadsForArrivals() bool {
	atRisk := m.facts.Type == "quorum" && (!m.facts.LimitKnown || !m.facts.DeliveryLimit.Unlimited())
	return m.data.len() <= liveReloadMax && !atRisk
}

// liveReloadMsg asks for a reload held back by liveReload.
type liveReloadMsg struct{}

// reloadForArrivals lists the arrivals: a reload (replacing the list once
// complete) at most every liveReload, none while one runs or an action
// holds the lot, none where reloadsForArrivals says no (the count says
// how many arrived; ctrl+r lists them).
func (m *messagesScreen) reloadForArrivals() tea.Cmd {
	if !m.reloadsForArrivals() {
		return nil
	}
	if m.loading || m.stopped || m.c.busy(m.queue) != "" {
		m.reloadDue = true
		return nil
	}
	if wait := liveReload - m.c.now().Sub(m.reloadAt); wait > 0 {
		m.reloadDue = true
		return tea.Tick(wait, func(time.Time) tea.Msg { return liveReloadMsg{} })
	}
	m.reloadDue, m.reloadAt = false, m.c.now()
	return m.load()
}
