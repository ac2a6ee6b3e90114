package watch

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// The state file keeps, across a restart of the watch, what it alone
// knows of each parking lot's ages: the time it first saw the head message
// (where no message tells its own time) and the depth rule's runs, with
// the counters they are reckoned from. Without it a restart would date
// those messages from the restart, and an age alert already pending would
// start again. The messages' own times need no file.

// stateVersion is the file's format; another is ignored (read as none).
const stateVersion = 1

type stateFile struct {
	Version int          `json:"version"`
	Saved   time.Time    `json:"saved"`
	Queues  []savedQueue `json:"queues"`
}

// savedQueue is one parking lot's memory (vhost as given in
// Options.Vhosts).
type savedQueue struct {
	Vhost         string     `json:"vhost"`
	Queue         string     `json:"queue"`
	HeadID        string     `json:"head_id,omitempty"`
	HeadSeen      time.Time  `json:"head_seen,omitzero"`
	Runs          []savedRun `json:"runs,omitempty"`
	Depth         int64      `json:"depth"`
	Arrivals      int64      `json:"arrivals"`
	ArrivalsKnown bool       `json:"arrivals_known"`
	Started       bool       `json:"started"`
	// RawArrivals and Republished: the broker's count and the watch's own
	// refreshes in it, so that Arrivals goes on from where it was.
	RawArrivals int64 `json:"raw_arrivals"`
	Republished int64 `json:"republished"`
}

type savedRun struct {
	N  int64     `json:"n"`
	At time.Time `json:"at"`
}

func stateKey(vhost, queue string) string { return vhost + "\x00" + queue }

// loadState reads the state file; a missing, unreadable or foreign one
// is no state (logged when it exists but cannot be used).
func (w *Watcher) loadState() {
	if w.o.StateFile == "" {
		return
	}
	b, err := os.ReadFile(w.o.StateFile)
	if errors.Is(err, fs.ErrNotExist) {
		return
	}
	var f stateFile
	if err == nil {
		err = json.Unmarshal(b, &f)
	}
	if err == nil && f.Version != stateVersion {
		err = fmt.Errorf("format %d, want %d", f.Version, stateVersion)
	}
	if err != nil {
		w.o.Log.Warn("watch: state file not used: ages start afresh", "path", w.o.StateFile, "err", err)
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.saved = make(map[string]savedQueue, len(f.Queues))
	for _, q := range f.Queues {
		w.saved[stateKey(q.Vhost, q.Queue)] = q
	}
}

// restore gives a parking lot seen for the first time since the start
// what the state file kept of it. Called with w.mu held.
func (w *Watcher) restore(v *vhostState, queue string, st *queueState) {
	if st.restored {
		return
	}
	st.restored = true
	q, ok := w.saved[stateKey(v.name, queue)]
	if !ok {
		return
	}
	delete(w.saved, stateKey(v.name, queue))
	st.head = headAges{id: q.HeadID, at: q.HeadSeen}
	st.depth = depthAges{depth: q.Depth, arrivals: q.Arrivals, arrivalsKnown: q.ArrivalsKnown, started: q.Started}
	for _, r := range q.Runs {
		st.depth.runs = append(st.depth.runs, arrival{r.N, r.At})
	}
	st.rawArrivals, st.republished = q.RawArrivals, q.Republished
}

// saveState writes the state file: to a temporary file, then renamed over
// it, so a crash leaves the old one or the new one.
func (w *Watcher) saveState(now time.Time) error {
	if w.o.StateFile == "" {
		return nil
	}
	f := stateFile{Version: stateVersion, Saved: now.UTC()}
	w.mu.Lock()
	for _, v := range w.vhosts {
		for name, st := range v.queues {
			if !st.restored {
				continue // not read yet: what the file had stays below
			}
			q := savedQueue{Vhost: v.name, Queue: name, HeadID: st.head.id, HeadSeen: st.head.at,
				Depth: st.depth.depth, Arrivals: st.depth.arrivals, ArrivalsKnown: st.depth.arrivalsKnown, Started: st.depth.started,
				RawArrivals: st.rawArrivals, Republished: st.republished}
			for _, r := range st.depth.runs {
				q.Runs = append(q.Runs, savedRun{r.n, r.at})
			}
			f.Queues = append(f.Queues, q)
		}
	}
	for _, q := range w.saved { // kept for a parking lot not read since the start
		f.Queues = append(f.Queues, q)
	}
	w.mu.Unlock()
	b, err := json.Marshal(f)
	if err != nil {
		return err
	}
	dir := filepath.Dir(w.o.StateFile)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, filepath.Base(w.o.StateFile)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // after the rename: nothing left
	if _, err := tmp.Write(b); err != nil {
		_ = tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), w.o.StateFile)
}
