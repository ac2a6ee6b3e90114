package daemon

import (
	"math/rand/v2"
	"reflect"
	"testing"
)

func deliveredOps(tags ...uint64) []ackOp {
	ops := make([]ackOp, len(tags))
	for i, tg := range tags {
		ops[i] = ackOp{tag: tg, kind: opDeliver}
	}
	return ops
}

func acksOf(tags ...uint64) []ackOp {
	ops := make([]ackOp, len(tags))
	for i, tg := range tags {
		ops[i] = ackOp{tag: tg, kind: opAck}
	}
	return ops
}

func TestAckBookCoalescesAContiguousPrefix(t *testing.T) {
	b := newAckBook()
	b.plan(deliveredOps(1, 2, 3, 4, 5))
	got := b.plan(acksOf(3, 1, 2))
	want := []ackAction{{Tag: 3, Multiple: true}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	if b.pending() != 2 {
		t.Fatalf("pending = %d, want 2 (tags 4 and 5)", b.pending())
	}
}

func TestAckBookAcksPastASlowMessageOneByOne(t *testing.T) {
	b := newAckBook()
	b.plan(deliveredOps(1, 2, 3, 4, 5))
	// Tag 1 is slow: acks behind it must not wait, nor cover it.
	got := b.plan(acksOf(2, 3, 5))
	want := []ackAction{{Tag: 2}, {Tag: 3}, {Tag: 5}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	// When the slow one finishes, only it is acked (single, since 2 and 3
	// are already settled and 4 is still pending).
	got = b.plan(acksOf(1))
	if want := []ackAction{{Tag: 1}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("after the slow one: got %+v, want %+v", got, want)
	}
	got = b.plan(acksOf(4))
	if want := []ackAction{{Tag: 4}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("last: got %+v, want %+v", got, want)
	}
	if b.pending() != 0 || len(b.order) != 0 {
		t.Fatalf("book not empty: pending=%d order=%v", b.pending(), b.order)
	}
}

func TestAckBookSendsNacksBeforeAMultipleAckCoveringThem(t *testing.T) {
	b := newAckBook()
	b.plan(deliveredOps(1, 2, 3))
	got := b.plan([]ackOp{{tag: 1, kind: opAck}, {tag: 2, kind: opRequeue}, {tag: 3, kind: opAck}})
	want := []ackAction{{Tag: 2, Requeue: true}, {Tag: 3, Multiple: true}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
}

func TestAckBookSingleAckIsNotMultiple(t *testing.T) {
	b := newAckBook()
	got := b.plan(append(deliveredOps(7), acksOf(7)...))
	if want := []ackAction{{Tag: 7}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
}

func TestAckBookIgnoresUnknownAndRepeatedTags(t *testing.T) {
	b := newAckBook()
	b.plan(deliveredOps(1))
	if got := b.plan(acksOf(9)); len(got) != 0 {
		t.Fatalf("an unregistered tag must never be acked: %+v", got)
	}
	b.plan(acksOf(1))
	if got := b.plan(acksOf(1)); len(got) != 0 {
		t.Fatalf("a tag is acked once: %+v", got)
	}
	if got := b.plan([]ackOp{{tag: 1, kind: opRequeue}}); len(got) != 0 {
		t.Fatalf("a settled tag is not nacked: %+v", got)
	}
}

// TestAckBookNeverAcksAnUnfinishedDelivery replays random interleavings
// and checks the invariant that matters: the set of tags the frames cover
// is exactly the set that was asked for, and each tag is settled once.
func TestAckBookNeverAcksAnUnfinishedDelivery(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := 0; round < 200; round++ {
		b := newAckBook()
		const n = 60
		var next uint64 = 1
		outstanding := map[uint64]bool{} // on the "server": delivered, not settled
		requested := map[uint64]ackKind{}
		var undecided []uint64
		frames := 0
		for next <= n || len(undecided) > 0 {
			var batch []ackOp
			for k := rng.IntN(4); k > 0 && next <= n; k-- {
				batch = append(batch, ackOp{tag: next, kind: opDeliver})
				outstanding[next] = true
				undecided = append(undecided, next)
				next++
			}
			for k := rng.IntN(5); k > 0 && len(undecided) > 0; k-- {
				i := rng.IntN(len(undecided))
				tag := undecided[i]
				undecided = append(undecided[:i], undecided[i+1:]...)
				kind := opAck
				if rng.IntN(5) == 0 {
					kind = opRequeue
				}
				requested[tag] = kind
				batch = append(batch, ackOp{tag: tag, kind: kind})
			}
			for _, a := range b.plan(batch) {
				frames++
				covered := []uint64{a.Tag}
				if a.Multiple {
					covered = covered[:0]
					for tag := range outstanding {
						if tag <= a.Tag {
							covered = append(covered, tag)
						}
					}
				}
				for _, tag := range covered {
					if !outstanding[tag] {
						t.Fatalf("round %d: frame %+v settles tag %d twice", round, a, tag)
					}
					want, ok := requested[tag]
					if !ok {
						t.Fatalf("round %d: frame %+v settles tag %d, which is still being handled", round, a, tag)
					}
					if (want == opRequeue) != a.Requeue {
						t.Fatalf("round %d: tag %d asked %v, frame %+v", round, tag, want, a)
					}
					delete(outstanding, tag)
				}
			}
		}
		if len(outstanding) != 0 {
			t.Fatalf("round %d: never settled: %v", round, outstanding)
		}
		if frames >= n {
			t.Logf("round %d: %d frames for %d messages", round, frames, n)
		}
	}
}

func TestAckBookRequeueRestGivesBackEveryUnsettledDeliveryInOneFrame(t *testing.T) {
	b := newAckBook()
	b.plan(deliveredOps(1, 2, 3, 4, 5, 6))
	b.plan(acksOf(1, 3))
	// Tag 2 is acked in the same batch as the give-back: its ack goes first,
	// then one nack (multiple) covers 4, 5 and 6.
	got := b.plan(append(acksOf(2), ackOp{kind: opRequeueRest}))
	want := []ackAction{{Tag: 2}, {Tag: 6, Requeue: true, Multiple: true}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	if b.pending() != 0 || len(b.order) != 0 {
		t.Fatalf("book not empty: pending=%d order=%v", b.pending(), b.order)
	}
	// A late ack of a given-back delivery sends nothing.
	if got := b.plan(acksOf(5)); len(got) != 0 {
		t.Fatalf("ack after the give-back: %+v", got)
	}
}

func TestAckBookRequeueRestOfOneIsASingleNackAndOfNoneIsNothing(t *testing.T) {
	b := newAckBook()
	if got := b.plan([]ackOp{{kind: opRequeueRest}}); len(got) != 0 {
		t.Fatalf("empty book: %+v", got)
	}
	b.plan(deliveredOps(7, 8))
	got := b.plan(append(acksOf(7), ackOp{kind: opRequeueRest}, ackOp{kind: opFlush}))
	want := []ackAction{{Tag: 7}, {Tag: 8, Requeue: true}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
}
