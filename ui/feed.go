package ui

import (
	"context"
	"sync"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/parkinglot/parkinglot/replay"
)

// feed carries a worker goroutine's output into Update, the bubbletea
// realtime-example way: a command waits for the next item and the receiver
// re-arms it after each one. Items are coalesced — every summary that
// arrived since the last wake in one batch, only the newest progress event —
// so a 100k-message browse or replay costs a few hundred renders, not 100k.
type feed struct {
	cancel context.CancelFunc
	wake   chan struct{} // capacity 1: "something is pending"

	mu        sync.Mutex
	summaries []replay.Summary
	event     *replay.Event
	canary    *CanaryUpdate
	final     tea.Msg // set once, when the worker is done
	delivered bool
	abandoned bool
	// release frees what an undelivered final message holds (a browse
	// spool) when nobody will read it.
	release func()
}

func newFeed(cancel context.CancelFunc) *feed {
	return &feed{cancel: cancel, wake: make(chan struct{}, 1)}
}

func (f *feed) poke() {
	select {
	case f.wake <- struct{}{}:
	default:
	}
}

// addSummaries is the browse's OnBatch.
func (f *feed) addSummaries(batch []replay.Summary) {
	f.mu.Lock()
	f.summaries = append(f.summaries, batch...)
	f.mu.Unlock()
	f.poke()
}

// setEvent is an action's Progress.
func (f *feed) setEvent(ev replay.Event) {
	f.mu.Lock()
	f.event = &ev
	f.mu.Unlock()
	f.poke()
}

// setCanary is a canary replay's OnCanary.
func (f *feed) setCanary(u CanaryUpdate) {
	f.mu.Lock()
	f.canary = &u
	f.mu.Unlock()
	f.poke()
}

// finish hands over the worker's result; release frees it if the feed was
// abandoned before or after this call without the result being read.
func (f *feed) finish(msg tea.Msg, release func()) {
	f.mu.Lock()
	if f.abandoned {
		f.mu.Unlock()
		if release != nil {
			release()
		}
		return
	}
	f.final, f.release = msg, release
	f.mu.Unlock()
	f.poke()
}

// abandon cancels the worker; its result, when it comes, is freed unread.
func (f *feed) abandon() {
	f.cancel()
	f.mu.Lock()
	f.abandoned = true
	var release func()
	if f.final != nil && !f.delivered {
		release, f.release = f.release, nil
	}
	f.mu.Unlock()
	if release != nil {
		release()
	}
	f.poke() // a waiting next returns
}

// feedBatchMsg, feedEventMsg and the final message are what next returns.
type (
	feedBatchMsg struct {
		f     *feed
		batch []replay.Summary
	}
	feedEventMsg struct {
		f  *feed
		ev replay.Event
	}
	feedCanaryMsg struct {
		f *feed
		u CanaryUpdate
	}
)

// next waits for what the worker produced since the last call.
func (f *feed) next() tea.Cmd {
	return func() tea.Msg {
		for {
			f.mu.Lock()
			switch {
			case f.abandoned:
				f.mu.Unlock()
				return nil
			case len(f.summaries) > 0:
				b := f.summaries
				f.summaries = nil
				f.mu.Unlock()
				return feedBatchMsg{f: f, batch: b}
			case f.event != nil:
				ev := *f.event
				f.event = nil
				f.mu.Unlock()
				return feedEventMsg{f: f, ev: ev}
			case f.canary != nil:
				u := *f.canary
				f.canary = nil
				f.mu.Unlock()
				return feedCanaryMsg{f: f, u: u}
			case f.final != nil && !f.delivered:
				f.delivered = true
				m := f.final
				f.mu.Unlock()
				return m
			case f.delivered:
				f.mu.Unlock()
				return nil
			}
			f.mu.Unlock()
			<-f.wake
		}
	}
}
