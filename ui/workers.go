package ui

import (
	"sync"
	"time"
)

// workers tracks goroutines that may hold messages, so that quitting waits
// until each has given everything back. After shutdown no new one starts.
type workers struct {
	mu       sync.Mutex
	n        int
	shutdown bool
	idle     *sync.Cond
}

func newWorkers() *workers {
	w := &workers{}
	w.idle = sync.NewCond(&w.mu)
	return w
}

func (w *workers) begin() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.shutdown {
		return false
	}
	w.n++
	return true
}

func (w *workers) end() {
	w.mu.Lock()
	w.n--
	if w.n == 0 {
		w.idle.Broadcast()
	}
	w.mu.Unlock()
}

// wait stops new workers and waits for the running ones, at most timeout.
// It reports whether all finished.
func (w *workers) wait(timeout time.Duration) bool {
	done := make(chan struct{})
	go func() {
		w.mu.Lock()
		w.shutdown = true
		for w.n > 0 {
			w.idle.Wait()
		}
		w.mu.Unlock()
		close(done)
	}()
	select {
	case <-done:
		return true
	case <-time.After(timeout):
		return false
	}
}
