package ui

import (
	"context"
	"errors"
	"fmt"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/replay"
)

// The typed results of the commands below. Update stores them; nothing in
// Update or View talks to the broker.
type (
	lotsLoadedMsg struct {
		lots Lots
		// scan: a read with the error groups; done is closed when the
		// scan gave every message back.
		scan *lotsScan
		err  error
	}
	queuesLoadedMsg struct {
		rows []QueueRow
		err  error
	}
	queuesTickMsg struct{}
	browseDoneMsg struct {
		f   *feed
		res BrowseResult
		err error
	}
	planMsg struct {
		d    *dialog
		seq  int
		plan Plan
		err  error
	}
	actionDoneMsg struct {
		f   *feed
		res replay.Result
		err error
	}
	messageLoadedMsg struct {
		src   MessageSource
		index int
		msg   broker.Message
		err   error
	}
	editReadyMsg struct {
		d     *dialog
		draft *EditDraft
		err   error
	}
	editorDoneMsg struct {
		d   *dialog
		err error
	}
)

// queueRefresh is how often the queues' depths are read again.
const queueRefresh = 2 * time.Second

func loadQueues(c *common) tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(c.ctx, 10*time.Second)
		defer cancel()
		rows, err := c.backend.Queues(ctx)
		return queuesLoadedMsg{rows: rows, err: err}
	}
}

// loadLots reads the parking lots' oldest ages and last hour's arrivals
// for the queues screen, apart from the depth refresh: a head read is
// slower than a listing.
func loadLots(c *common) tea.Cmd {
	busy := c.busyQueues() // read here, in Update: the jobs are the root model's
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(c.ctx, 30*time.Second)
		defer cancel()
		lots, err := c.backend.ParkingLots(ctx, false, busy)
		return lotsLoadedMsg{lots: lots, err: err}
	}
}

// lotsScan is a count of the parking lots' error groups under way (a
// browse pass of each): cancel ends it, done is closed once every message
// it held is given back.
type lotsScan struct {
	cancel context.CancelFunc
	done   chan struct{}
}

// scanLots counts the parking lots' error groups in the background. It
// counts as a worker: quitting waits for its give-back.
func scanLots(c *common) (*lotsScan, tea.Cmd) {
	ctx, cancel := context.WithCancel(c.ctx)
	s := &lotsScan{cancel: cancel, done: make(chan struct{})}
	busy := c.busyQueues()
	return s, func() tea.Msg {
		defer close(s.done)
		defer cancel()
		if !c.workers.begin() {
			return nil
		}
		defer c.workers.end()
		lots, err := c.backend.ParkingLots(ctx, true, busy)
		return lotsLoadedMsg{lots: lots, scan: s, err: err}
	}
}

// afterScan runs next once s gave every message back, after cancelling it
// (nil s: at once): a queue opened from the queues screen is browsed whole.
func afterScan(s *lotsScan, next tea.Cmd) tea.Cmd {
	if s == nil {
		return next
	}
	s.cancel()
	return func() tea.Msg {
		<-s.done
		return next()
	}
}

func tickQueues(c *common) tea.Cmd {
	if c.refresh < 0 {
		return nil
	}
	return tea.Tick(c.refresh, func(time.Time) tea.Msg { return queuesTickMsg{} })
}

// startBrowse begins a pass over queue (only the messages filter, an
// expr-lang expression, matches; "" for all). The first command waits for
// the queue's previous read to give its messages back (common.turn), then
// starts the worker and waits for its first output; the screen re-arms
// f.next() after each message until the final browseDoneMsg.
func startBrowse(c *common, queue, filter string) (*feed, tea.Cmd) {
	ctx, cancel := context.WithCancel(c.ctx)
	f := newFeed(cancel)
	after, done := c.turn(queue)
	start := func() tea.Msg {
		if !waitTurn(ctx, after) || !c.workers.begin() {
			close(done)
			cancel()
			return nil
		}
		go func() {
			defer close(done)
			defer c.workers.end()
			defer cancel()
			res, err := c.backend.Browse(ctx, BrowseRequest{Queue: queue, Filter: filter, OnBatch: f.addSummaries})
			var release func()
			if res.Messages != nil {
				release = func() { _ = res.Messages.Close() }
			}
			f.finish(browseDoneMsg{f: f, res: res, err: err}, release)
		}()
		return f.next()()
	}
	return f, start
}

// waitTurn waits until after is closed (nil: at once); false when ctx
// ended first or meanwhile: the read is not to start.
func waitTurn(ctx context.Context, after <-chan struct{}) bool {
	if after != nil {
		select {
		case <-after:
		case <-ctx.Done():
		}
	}
	return ctx.Err() == nil
}

// runFunc is the backend call an action makes in its worker.
type runFunc func(ctx context.Context, req ActionRequest) (replay.Result, error)

// startAction runs an action in a worker, streaming progress to the feed.
func startAction(c *common, req ActionRequest, run runFunc) (*feed, tea.Cmd) {
	ctx, cancel := context.WithCancel(c.ctx)
	f := newFeed(cancel)
	req.Progress = f.setEvent
	if req.Canary != nil {
		req.OnCanary = f.setCanary
	}
	after, done := c.turn(req.Queue) // its pass reads the queue too
	start := func() tea.Msg {
		if !c.workers.begin() {
			close(done)
			return nil
		}
		go func() {
			defer close(done)
			defer c.workers.end()
			defer cancel()
			var res replay.Result
			var err error
			if waitTurn(ctx, after) {
				res, err = run(ctx, req)
			} else {
				err = ctx.Err() // cancelled before its turn: nothing done
			}
			f.finish(actionDoneMsg{f: f, res: res, err: err}, nil)
		}()
		return f.next()()
	}
	return f, start
}

// loadPlan asks for the plan of req (a pass over the chosen messages) once
// the queue's previous read gave its messages back; cancel stops it.
func loadPlan(c *common, d *dialog, seq int, req ActionRequest) (context.CancelFunc, tea.Cmd) {
	ctx, cancel := context.WithCancel(c.ctx)
	after, done := c.turn(req.Queue)
	return cancel, func() tea.Msg {
		defer close(done)
		defer cancel()
		if !waitTurn(ctx, after) || !c.workers.begin() {
			return nil // replaced by a newer plan, or the dialog closed
		}
		defer c.workers.end()
		ctx, stop := context.WithTimeout(ctx, time.Minute)
		defer stop()
		p, err := c.backend.Plan(ctx, req)
		return planMsg{d: d, seq: seq, plan: p, err: err}
	}
}

func loadMessage(src MessageSource, index int) tea.Cmd {
	return func() tea.Msg {
		if src == nil {
			return messageLoadedMsg{index: index, err: errors.New("the message is not loaded yet")}
		}
		m, err := src.Get(index)
		if err != nil {
			err = fmt.Errorf("read message: %w", err)
		}
		return messageLoadedMsg{src: src, index: index, msg: m, err: err}
	}
}

func prepareEdit(c *common, d *dialog, queue, id string) tea.Cmd {
	after, done := c.turn(queue) // it reads the queue for the message
	return func() tea.Msg {
		defer close(done)
		if !waitTurn(c.ctx, after) || !c.workers.begin() {
			return nil
		}
		defer c.workers.end()
		draft, err := c.backend.PrepareEdit(c.ctx, queue, id)
		return editReadyMsg{d: d, draft: draft, err: err}
	}
}
