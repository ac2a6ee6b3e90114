package broker

import (
	"errors"
	"fmt"
	"slices"
)

func (p *Pass) ack(tag uint64) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.done {
		return fmt.Errorf("ack %d: pass is closed (the message was given back)", tag)
	}
	return p.ackLocked(tag)
}

func (p *Pass) ackLocked(tag uint64) error {
	return p.ackManyLocked([]uint64{tag})
}

// AckAll removes the messages from their queues, as Held.Ack does for one,
// with as few frames as it can: the held deliveries that form the
// contiguous prefix of a pass's outstanding delivery tags go in one
// basic.ack(multiple), the rest one by one. Besides the frames saved, this
// keeps a quorum queue's pipeline short: it holds back a channel's commands
// past its soft limit and drops them if the channel closes first. An ack
// may wait for a quorum pass to change segment (one round trip). The
// result has an error (or nil) per message.
func AckAll(held []*Held) []error {
	errs := make([]error, len(held))
	byPass := map[*Pass][]int{}
	for i, h := range held {
		byPass[h.pass] = append(byPass[h.pass], i)
	}
	for p, idx := range byPass {
		tags := make([]uint64, len(idx))
		for j, i := range idx {
			tags[j] = held[i].DeliveryTag
		}
		p.mu.Lock()
		var err error
		if p.done {
			err = errors.New("ack: pass is closed (the message was given back)")
		} else {
			err = p.ackManyLocked(tags)
		}
		p.mu.Unlock()
		for _, i := range idx {
			errs[i] = err
		}
	}
	return errs
}

// ackManyLocked acks tags: a multiple ack over the prefix from the lowest
// outstanding tag when the batch completes it, single acks for the rest.
// Delivery tags on a channel start at 1 and grow by one per delivery, and a
// multiple ack covers every unacked tag up to its own, so it is only safe
// over a prefix in which every tag is acked or being acked.
func (p *Pass) ackManyLocked(tags []uint64) error {
	if p.revoked.Load() {
		return fmt.Errorf("ack: %w: the messages it held went back to the queue, and are not removed", ErrConsumerCancelled)
	}
	if p.nextTag == 0 {
		p.nextTag = 1
	}
	fresh := tags[:0:0]
	for _, t := range tags {
		if !p.isAcked(t) {
			fresh = append(fresh, t)
		}
	}
	if len(fresh) == 0 {
		return nil
	}
	slices.Sort(fresh)
	fresh = slices.Compact(fresh)
	batch := make(map[uint64]bool, len(fresh))
	for _, t := range fresh {
		batch[t] = true
	}
	end := p.nextTag - 1
	for p.acked[end+1] || batch[end+1] {
		end++
	}
	single := fresh
	if i := sortSearch(fresh, end); end >= p.nextTag && i > 0 {
		// The broker refuses a multiple ack whose own tag is already
		// acked, so it goes on the last fresh tag of the prefix.
		if err := p.ch.Ack(fresh[i-1], true); err != nil {
			return fmt.Errorf("ack: %w", Explain(err))
		}
		for _, t := range fresh[:i] {
			p.mark(t)
		}
		single = fresh[i:]
		p.forgetBelow(end + 1)
	}
	for _, t := range single {
		if err := p.ch.Ack(t, false); err != nil {
			return fmt.Errorf("ack: %w", Explain(err))
		}
		p.mark(t)
	}
	return nil
}

// sortSearch returns how many of the sorted tags are <= end.
func sortSearch(tags []uint64, end uint64) int {
	i, _ := slices.BinarySearch(tags, end+1)
	return i
}

// isAcked: below nextTag every tag is acked; above it, acked says.
func (p *Pass) isAcked(tag uint64) bool { return tag < p.nextTag || p.acked[tag] }

// forgetBelow moves nextTag to next and drops the tags below it from
// acked, so a pass that removes a million messages does not keep a
// million tags: only those acked beyond a gap.
func (p *Pass) forgetBelow(next uint64) {
	for t := p.nextTag; t < next; t++ {
		delete(p.acked, t)
	}
	p.nextTag = next
}

func (p *Pass) mark(tag uint64) {
	p.acked[tag] = true
	delete(p.atRisk, tag)
	p.taken++
	if tag >= p.segFirstTag {
		p.segSettled++ // the newest segment may now be sent one more
	}
}
