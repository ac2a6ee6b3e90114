package broker

import (
	"context"
	"errors"
	"io"
	"time"
)

// How a give-back places messages (measured on 3.10.8, 4.0.5 and 4.3.6;
// TestBrowseEarlyEndKeepsTheOrder, TestVersionQuorumLargeGiveBackOrder):
//
//   - classic queues put a given-back message back in its position;
//   - quorum queues put given-back messages either at the back (without a
//     delivery limit before 4.3) or in a returns queue delivered ahead of
//     the other ready messages (with a limit; from 4.3 always), in the order
//     they are returned. Either way a give-back of some messages moves them
//     behind others: behind the ready ones at the back, or, ahead, behind
//     the messages an earlier pass returned (measured on every version: a
//     full pass, then passes with limits 1 and 3, rotated 4.0.5's default
//     quorum queue to m-0004 … m-0009 m-0000 … m-0003);
//   - before 4.0 a quorum queue with a delivery limit applies a return of
//     more than 32 messages in no particular order (a basic.nack(multiple)
//     of 3,000 came back shuffled on 3.10.8; 3.11–3.13 assumed alike).
//
// So a pass over a quorum queue (or one of unknown type) that ends early (a
// limit, `show`, ids found, a cancelled load) goes on holding every message
// that was ready when it began and gives them all back at once, like a
// full pass: the queue keeps its order at the price of a full pass. Before
// 4.0, on a queue that may have a delivery limit, the give-back goes 32
// messages at a time, each batch once the last is ready again.
type orderRule struct {
	// holdAll: an early end holds the rest of the pass before the give-back.
	holdAll bool
	// batched: the give-back goes giveBackBatch messages at a time.
	batched bool
}

// giveBackBatch is the most messages one give-back returns on a queue that
// needs batches: RabbitMQ 3.10.8 kept the order of returns up to 32
// messages (measured with 16 and 32 per basic.nack, each waited for).
const giveBackBatch = 32

// orderRuleFor says what keeps the order of a queue of these facts on
// this server version. Without the management API the queue may be a
// quorum queue with or without a limit: the pass does what both need.
func orderRuleFor(f QueueFacts, v Version) orderRule {
	if f.Type == "classic" {
		return orderRule{}
	}
	limited := !f.LimitKnown || !f.DeliveryLimit.Unlimited()
	v4 := v.Known() && v.AtLeast(4, 0, 0)
	return orderRule{holdAll: true, batched: limited && !v4}
}

// holdRest reads the rest of an early-ended pass (every message that was
// ready when it began) so that all of them are given back together. It
// returns how many it held, and a note when it could not finish.
func (p *Pass) holdRest(ctx context.Context) (int, *Note) {
	p.mu.Lock()
	before := p.seen
	// Even a pass that read nothing may hold what the broker pushed.
	if before >= p.full {
		p.mu.Unlock()
		return 0, nil
	}
	p.target = p.full
	p.mu.Unlock()
	for {
		_, err := p.Next(ctx)
		if err != nil {
			p.mu.Lock()
			held := p.seen - before
			p.mu.Unlock()
			if errors.Is(err, io.EOF) {
				return held, nil
			}
			return held, &Note{Kind: NoteOrderNotKept, Err: err, Count: before + held}
		}
	}
}

// takePushed holds, after the pass's consumers were cancelled, the
// deliveries the broker pushed that the caller never read (amqp091-go
// hands over every delivery it had before it closes a cancelled consumer's
// Go channel), so that a batched give-back knows their tags and the
// delivery limit is checked for each. It returns how many it took.
func (p *Pass) takePushed(ctx context.Context) int {
	n := 0
	wait := time.NewTimer(p.answerWait())
	defer wait.Stop()
	for _, c := range p.consumers[p.drained:] {
	drain:
		for {
			select {
			case d, ok := <-c.deliveries:
				if !ok {
					break drain
				}
				p.hold(d, false)
				n++
			case <-ctx.Done():
				return n
			case <-wait.C:
				return n
			}
		}
	}
	return n
}

// giveBackInBatches returns the outstanding deliveries in delivery order,
// batch after batch, each once the previous one is ready again: a batch is
// a segment of the pass (browse_pace.go), cut to size messages when size is
// over 0. A quorum queue applies one nack's returns grouped by consumer,
// and holds a channel's commands back past its soft limit, then sends them
// on grouped by consumer too: either way in no fixed order (measured on
// 4.3.6: after a 70,000-message pass, the last segment came back ahead of
// the one before it). A batch not ready within its wait ends the
// batching: the rest go back at once (their order may change, nothing is
// lost), and the note says so.
func (p *Pass) giveBackInBatches(ctx context.Context, size int) *Note {
	p.mu.Lock()
	all := batches(max(p.nextTag, 1), p.lastTag, func(t uint64) bool { return !p.isAcked(t) }, p.segmentStarts(), size)
	p.mu.Unlock()
	if len(all) <= 1 {
		return nil
	}
	base, err := p.readyNow()
	if err != nil {
		return nil
	}
	// A segment's give-back is large: poll its readiness gently, and wait
	// for it longer.
	pause, wait := time.Duration(0), batchWait
	if size == 0 {
		pause, wait = 20*time.Millisecond, segmentWait
	}
	given := 0
	for _, b := range all {
		// multiple: every unacked tag up to the batch's last, which is this
		// batch (those before it were given back already).
		if err := p.ch.Nack(b.last, true, true); err != nil {
			return nil
		}
		given += b.count
		if !p.awaitReady(ctx, base+given, wait, pause) {
			return &Note{Kind: NoteGiveBackSlow, Count: given, Wait: wait}
		}
	}
	return nil
}

// batch is one give-back: the held tags up to last, count of them.
type batch struct {
	last  uint64
	count int
}

// batches cuts the held tags from first to last at the start of each
// segment (starts, ascending), and into batches of at most size tags when
// size is over 0. It keeps a batch's last tag and count, not its tags, so
// that a pass over a million messages does not list a million tags.
func batches(first, last uint64, held func(uint64) bool, starts []uint64, size int) []batch {
	var out []batch
	var cur batch
	for t := first; t <= last; t++ {
		if len(starts) > 0 && t >= starts[0] {
			for len(starts) > 0 && t >= starts[0] {
				starts = starts[1:]
			}
			if cur.count > 0 {
				out, cur = append(out, cur), batch{}
			}
		}
		if !held(t) {
			continue
		}
		cur.last, cur.count = t, cur.count+1
		if cur.count == size {
			out, cur = append(out, cur), batch{}
		}
	}
	if cur.count > 0 {
		out = append(out, cur)
	}
	return out
}

// readyNow is the queue's ready count from one passive declare. Unlike
// readyCount it takes a 0 as it comes: with every message held a 0 is the
// truth, and a quorum queue's occasional false 0 only means one more poll
// here (or, for the base, a batch sent before the last was ready, at worst
// out of order, never lost).
func (p *Pass) readyNow() (int, error) {
	q, err := p.ch.QueueDeclarePassive(p.facts.Name, false, false, false, false, nil)
	return q.Messages, err
}

// batchWait bounds the wait for one batch of a batched give-back, and
// segmentWait for one segment's. A segment's usually takes a second or
// less, but RabbitMQ 3.10.8 once took about 100 s to make 65,535 returned
// messages ready when its Raft log rolled over during the pass (measured,
// the roll-over forced with ra_log_wal:force_roll_over; 4.0.5 and 4.3.6 took
// no longer than usual).
const (
	batchWait   = 5 * time.Second
	segmentWait = 3 * time.Minute
)

// awaitReady polls the ready count (each poll a round trip, pause between
// two) until it reaches want (false after wait).
func (p *Pass) awaitReady(ctx context.Context, want int, wait, pause time.Duration) bool {
	deadline := time.Now().Add(wait)
	for first := true; ; first = false {
		if !first && pause > 0 {
			t := time.NewTimer(pause)
			select {
			case <-ctx.Done():
				t.Stop()
				return false
			case <-t.C:
			}
		}
		ready, err := p.readyNow()
		if err != nil {
			return false
		}
		if ready >= want {
			return true
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return false
		}
	}
}
