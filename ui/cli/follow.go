package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/parkinglot/parkinglot/replay"
	"github.com/parkinglot/parkinglot/ui/format"
)

// followed is what `replay --follow D` saw arrive in the parking lot from
// the replay's start until D after its end: the replayed messages that
// came back (they carry the run's id) and new failures, by error group.
type followed struct {
	Lot      string         `json:"queue"`
	For      string         `json:"followed_for"`
	CameBack int            `json:"came_back"`
	BackBy   map[string]int `json:"came_back_by_group"`
	New      int            `json:"new"`
	NewBy    map[string]int `json:"new_by_group"`
	Dropped  int            `json:"dropped,omitempty"`
	err      error          // the tail's, when it could not follow
}

// follower tails a lot while a replay runs and for a while after it.
type follower struct {
	rep  followed
	stop context.CancelFunc
	done chan struct{}
}

// startFollow starts tailing lot for the copies of run, and returns once
// the tail's taps are open (so nothing that comes back is missed), or
// nil and the reason when the lot cannot be followed.
func startFollow(ctx context.Context, s Tailer, lot, run string, d time.Duration) (*follower, error) {
	fo := &follower{rep: followed{Lot: lot, For: d.String(), BackBy: map[string]int{}, NewBy: map[string]int{}}, done: make(chan struct{})}
	tctx, cancel := context.WithCancel(ctx)
	fo.stop = cancel
	ready := make(chan error, 1)
	go func() {
		defer close(fo.done)
		res, err := s.Tail(tctx, replay.TailOptions{Queues: []string{lot},
			OnTapped: func(setup replay.TailSetup) {
				if len(setup.Untapped) > 0 {
					ready <- setup.Untapped[0].Err
					return
				}
				ready <- nil
			},
			OnArrival: func(a replay.TailArrival) { // one goroutine: Tail calls it in order
				if a.Summary.Facts.ReplayRun == run {
					fo.rep.CameBack++
					fo.rep.BackBy[a.Summary.Group]++
					return
				}
				fo.rep.New++
				fo.rep.NewBy[a.Summary.Group]++
			}})
		fo.rep.Dropped, fo.rep.err = res.Dropped, err
		select {
		case ready <- err: // it ended before its taps were open
		default:
		}
	}()
	if err := <-ready; err != nil {
		cancel()
		<-fo.done
		return nil, err
	}
	return fo, nil
}

// finish follows for d more (or until ctx ends) and returns what it saw.
func (fo *follower) finish(ctx context.Context, d time.Duration) followed {
	select {
	case <-time.After(d):
	case <-ctx.Done():
	case <-fo.done: // the tail ended by itself: its connection was lost
	}
	fo.stop()
	<-fo.done
	return fo.rep
}

// writeFollowed reports what came back and what newly failed.
func writeFollowed(w io.Writer, f followed) {
	fmt.Fprintf(w, "followed %s for %s after the replay: %d came back, %d new failure(s)\n", format.Name(f.Lot), f.For, f.CameBack, f.New)
	for _, g := range byCount(f.BackBy) {
		fmt.Fprintf(w, "  came back: %d × %s\n", f.BackBy[g], format.OneLine(orNoError(g)))
	}
	for _, g := range byCount(f.NewBy) {
		fmt.Fprintf(w, "  new: %d × %s\n", f.NewBy[g], format.OneLine(orNoError(g)))
	}
	if f.Dropped > 0 {
		fmt.Fprintf(w, "  %d arrival(s) dropped unseen (a full tap)\n", f.Dropped)
	}
	if f.err != nil && !errors.Is(f.err, context.Canceled) {
		fmt.Fprintf(w, "  the tail ended early: %s\n", firstLine(f.err.Error()))
	}
}
