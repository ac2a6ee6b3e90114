package replay

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"os"
	"slices"
	"time"
)

// NewRunID names a replay run: its start time in UTC and four random hex
// digits, "20261205T100200Z-3f2a" — sortable, and short enough to type
// into `replay --status`.
func NewRunID() string {
	var b [2]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return time.Now().UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(b[:])
}

// ErrRunNotFound: the audit log has no entry of the run asked about.
var ErrRunNotFound = errors.New("no replay run with that id in the audit log")

// RunStatus is what became of a replay run: what the audit log says it
// replayed, and how many of those copies came back to a parking lot,
// found by their x-replay-run in a harmless browse.
type RunStatus struct {
	Run string `json:"run"`
	// Replayed counts the run's messages whose copy the broker confirmed
	// and whose parked message was removed; NotDone those that stayed
	// parked. A message is its replay id, and its last entry decides (a
	// removal that failed and was sent again is one message, replayed).
	Replayed int `json:"replayed"`
	NotDone  int `json:"not_done,omitempty"`
	// From are the parking lots the run replayed from.
	From []string `json:"from"`
	// First and Last are the times of its first and last audit entries.
	First time.Time `json:"first_replayed_at"`
	Last  time.Time `json:"last_replayed_at"`
	// Watched are the parking lots browsed for returns.
	Watched  []string `json:"watched"`
	CameBack int      `json:"came_back"`
	// Groups counts what came back by error group (retrycore.GroupKey);
	// SameError how many of them fail with the error they were replayed
	// with (retrycore.Facts.SameError).
	Groups    map[string]int `json:"groups,omitempty"`
	SameError int            `json:"same_error"`
	Notes     []Note         `json:"-"` // ui/cli puts them, worded, in -o json
}

// RunStatus reads the audit log for run's entries, then browses the
// parking lots (queues, or else those the run replayed from) for the
// messages carrying x-replay-run run. Neither takes a message.
func (s *Session) RunStatus(ctx context.Context, run string, queues []string) (RunStatus, error) {
	st := RunStatus{Run: run, Groups: map[string]int{}}
	if err := s.readRun(&st); err != nil {
		return st, err
	}
	st.Watched = queues
	if len(st.Watched) == 0 {
		st.Watched = st.From
	}
	seen := map[string]bool{} // a copy parked twice (duplicated downstream) came back once
	for _, q := range st.Watched {
		b, err := s.Browse(ctx, BrowseOptions{Queue: q, StreamOnly: true, OnBatch: func(batch []Summary) {
			for _, sum := range batch {
				if sum.Facts.ReplayRun != run || seen[sum.Facts.ReplayID] {
					continue
				}
				seen[sum.Facts.ReplayID] = true
				st.CameBack++
				st.Groups[sum.Group]++
				if sum.Facts.SameError != nil && *sum.Facts.SameError {
					st.SameError++
				}
			}
		}})
		if err != nil {
			return st, fmt.Errorf("%s: %w", q, err)
		}
		if b.Management != nil {
			st.Notes = appendOnce(st.Notes, Note{Kind: NoteError, Err: b.Management})
		}
		st.Notes = append(st.Notes, b.Notes...)
	}
	return st, nil
}

// readRun streams the audit log for run's entries (the log may be large:
// a line is decoded only when it names the run).
func (s *Session) readRun(st *RunStatus) error {
	path := s.AuditPath
	if path == "" {
		path = DefaultAuditPath()
	}
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("%w: %s (%s does not exist)", ErrRunNotFound, st.Run, path)
	}
	if err != nil {
		return fmt.Errorf("audit log: %w", err)
	}
	defer f.Close()
	return scanRun(f, st, path)
}

// scanRun counts run st.Run's entries of the audit log r into st.
func scanRun(r io.Reader, st *RunStatus, path string) error {
	needle, _ := json.Marshal(st.Run)
	needle = append([]byte(`"run":`), needle...)
	br := bufio.NewReaderSize(r, 64<<10)
	found := false
	// done: each message's last result, by a hash of its replay id (8
	// bytes a message, not the id: a run may hold a million).
	seed := maphash.MakeSeed()
	done := map[uint64]bool{}
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 && bytes.Contains(line, needle) {
			var e AuditEntry
			if json.Unmarshal(line, &e) == nil && e.Run == st.Run {
				found = true
				key := e.ReplayID
				if key == "" {
					key = e.MessageID + "\x00" + e.Queue
				}
				done[maphash.String(seed, key)] = e.Result == resultOK
				if e.Queue != "" && !slices.Contains(st.From, e.Queue) {
					st.From = append(st.From, e.Queue)
				}
				if st.First.IsZero() || e.Time.Before(st.First) {
					st.First = e.Time
				}
				if e.Time.After(st.Last) {
					st.Last = e.Time
				}
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("audit log %s: %w", path, err)
		}
	}
	if !found {
		return fmt.Errorf("%w: %s (in %s)", ErrRunNotFound, st.Run, path)
	}
	for _, ok := range done {
		if ok {
			st.Replayed++
		} else {
			st.NotDone++
		}
	}
	return nil
}
