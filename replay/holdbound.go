package replay

import (
	"errors"
	"time"

	"github.com/parkinglot/parkinglot/broker"
)

// A rate-limited replay holds the parking lot's messages while it sends
// them slowly, and the broker ends a consumer that holds a delivery past
// its consumer timeout (30 minutes unless the queue or the broker says
// otherwise): a channel closed, which before 4.3 counts against a quorum
// queue's delivery limit, or from 4.3 a quorum consumer cancelled. So such
// a run holds nothing longer than half the timeout: each pass stops
// choosing after a quarter of it, with no more read ahead than the rate
// sends in another quarter, then gives back the rest and the next pass
// goes on where it left off.

// errPassTimeUp ends a pass that has held the lot as long as it may; the
// run goes on with another.
var errPassTimeUp = errors.New("the pass held the queue as long as its consumer timeout allows")

// boundPass sets how long the coming pass over a queue of these facts may
// choose (r.chooseFor) and how much it reads ahead; a run without a rate
// sends as fast as confirms come and is not bounded.
func (r *run) boundPass(f broker.QueueFacts) {
	if r.limiter == nil {
		return
	}
	timeout := f.ConsumerTimeout
	if timeout <= 0 {
		timeout = broker.DefaultConsumerTimeout
	}
	r.chooseFor = timeout / 4
	ahead := int(float64(r.limiter.Limit()) * r.chooseFor.Seconds())
	r.readAhead = min(max(ahead, 1), readAhead)
}

// timeUp reports whether a pass begun at start has chosen as long as it
// may.
func (r *run) timeUp(start time.Time) bool {
	return r.chooseFor > 0 && time.Since(start) > r.chooseFor
}
