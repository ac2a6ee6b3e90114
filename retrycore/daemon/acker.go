package daemon

import (
	"log/slog"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// ackKind is what to tell the broker about a delivery.
type ackKind uint8

const (
	opDeliver     ackKind = iota // registered: delivered, not yet settled
	opAck                        // done: remove it from the queue
	opRequeue                    // give it back (nack, requeue)
	opRequeueRest                // give back every delivery not settled yet
	opFlush                      // no frame: answered once every earlier op's frames were sent
)

// ackOp is one request to the acker.
type ackOp struct {
	tag  uint64
	kind ackKind
	sent chan struct{} // opFlush: closed once the frames before it were sent
}

// ackAction is one frame the acker sends: basic.ack (Multiple: every
// delivery up to Tag) or basic.nack with requeue.
type ackAction struct {
	Tag      uint64
	Multiple bool
	Requeue  bool // a nack; otherwise an ack
}

// ackBook tracks the unsettled deliveries of one channel in delivery order
// and turns a batch of acks into as few frames as is safe: one ack with
// multiple=true for the longest prefix of settled deliveries, and single
// acks for the rest, so a slow message never holds back the others' acks.
// It is a pure value so its coalescing can be tested without a broker.
type ackBook struct {
	order []uint64           // delivered tags, oldest first, until settled at the front
	state map[uint64]ackKind // opDeliver: pending; opAck: ack requested; absent: settled
}

func newAckBook() *ackBook {
	return &ackBook{state: map[uint64]ackKind{}}
}

// plan applies a batch of operations (in the order they were queued) and
// returns the frames to send, in order. Nacks go first: a later multiple
// ack must not cover a delivery that is to be given back.
func (b *ackBook) plan(ops []ackOp) []ackAction {
	var out []ackAction
	acks := 0
	for _, op := range ops {
		switch op.kind {
		case opDeliver:
			b.order = append(b.order, op.tag)
			b.state[op.tag] = opDeliver
		case opRequeue:
			if _, ok := b.state[op.tag]; ok {
				out = append(out, ackAction{Tag: op.tag, Requeue: true})
				delete(b.state, op.tag)
			}
		case opRequeueRest:
			// One nack with multiple=true on the newest unsettled delivery
			// gives back every unsettled delivery of the channel. Requested
			// acks go first, so the nack does not cover them.
			if acks > 0 {
				out = append(out, b.ackRequested()...)
				acks = 0
			}
			if last, ok := b.newestPending(); ok {
				out = append(out, ackAction{Tag: last, Requeue: true, Multiple: len(b.state) > 1})
			}
			clear(b.state)
			b.order = b.order[:0:0]
		case opAck:
			if k, ok := b.state[op.tag]; ok && k == opDeliver {
				b.state[op.tag] = opAck
				acks++
			}
		}
	}
	if acks > 0 {
		out = append(out, b.ackRequested()...)
	}
	b.trim()
	return out
}

// ackRequested returns the frames for every requested ack.
func (b *ackBook) ackRequested() []ackAction {
	var out []ackAction
	// The longest prefix of the outstanding deliveries that is all settled
	// or ack-requested can be acked with one multiple=true frame.
	var last uint64
	inPrefix := 0
	i := 0
	for ; i < len(b.order); i++ {
		k, ok := b.state[b.order[i]]
		if ok && k == opDeliver {
			break
		}
		if ok && k == opAck {
			last = b.order[i]
			inPrefix++
			delete(b.state, b.order[i])
		}
	}
	b.order = b.order[i:]
	if inPrefix > 0 {
		out = append(out, ackAction{Tag: last, Multiple: inPrefix > 1})
	}
	// Acks behind a pending delivery go one by one.
	for _, tag := range b.order {
		if k, ok := b.state[tag]; ok && k == opAck {
			out = append(out, ackAction{Tag: tag})
			delete(b.state, tag)
		}
	}
	return out
}

// newestPending is the newest delivery not settled yet.
func (b *ackBook) newestPending() (uint64, bool) {
	for i := len(b.order) - 1; i >= 0; i-- {
		if _, ok := b.state[b.order[i]]; ok {
			return b.order[i], true
		}
	}
	return 0, false
}

// trim drops settled tags from the front so order stays short.
func (b *ackBook) trim() {
	i := 0
	for i < len(b.order) {
		if _, ok := b.state[b.order[i]]; ok {
			break
		}
		i++
	}
	b.order = b.order[i:]
	if len(b.order) == 0 {
		b.order = b.order[:0:0] // let the backing array go
	}
}

// pending is how many deliveries are not settled yet.
func (b *ackBook) pending() int { return len(b.state) }

// acker owns all acks and nacks of one consume channel: one goroutine, so
// frames are never interleaved, and coalesced so the happy path costs far
// fewer frames than messages.
type acker struct {
	ch  *amqp.Channel
	ops chan ackOp
	log *slog.Logger
	// done is closed when the acker has sent everything it was given.
	done chan struct{}
}

func newAcker(ch *amqp.Channel, buffer int, log *slog.Logger) *acker {
	return &acker{ch: ch, ops: make(chan ackOp, buffer), log: log, done: make(chan struct{})}
}

// run sends frames until ops is closed, then returns after the last batch.
func (a *acker) run() {
	defer close(a.done)
	book := newAckBook()
	batch := make([]ackOp, 0, cap(a.ops)+1)
	failed := false
	for op := range a.ops {
		batch = append(batch[:0], op)
		// Take everything already queued: under load this is many acks.
	drain:
		for {
			select {
			case more, ok := <-a.ops:
				if !ok {
					break drain
				}
				batch = append(batch, more)
			default:
				break drain
			}
		}
		actions := book.plan(batch)
		if !failed {
			failed = a.send(actions)
		}
		for _, op := range batch {
			if op.kind == opFlush {
				close(op.sent)
			}
		}
	}
}

// send sends the frames, reporting whether the channel failed (then the
// broker gives back what was not acked, and the acker sends no more).
func (a *acker) send(actions []ackAction) (failed bool) {
	for _, act := range actions {
		var err error
		if act.Requeue {
			err = a.ch.Nack(act.Tag, act.Multiple, true)
		} else {
			err = a.ch.Ack(act.Tag, act.Multiple)
		}
		if err != nil {
			a.log.Warn("ack failed; the broker will redeliver what was not acknowledged", "tag", act.Tag, "err", err)
			return true
		}
	}
	return false
}

// deliver registers a delivery before it is handed to a worker.
func (a *acker) deliver(tag uint64) { a.ops <- ackOp{tag: tag, kind: opDeliver} }

// ack asks for the delivery to be acked.
func (a *acker) ack(tag uint64) { a.ops <- ackOp{tag: tag, kind: opAck} }

// requeue asks for the delivery to be given back.
func (a *acker) requeue(tag uint64) { a.ops <- ackOp{tag: tag, kind: opRequeue} }

// requeueRest asks for every delivery not settled yet to be given back.
func (a *acker) requeueRest() { a.ops <- ackOp{kind: opRequeueRest} }

// flush returns once the frames of every op queued before it were sent
// (written to the connection, in order), or the channel failed (true), or
// after wait (false: a connection whose peer reads nothing can hold a
// write back).
func (a *acker) flush(wait time.Duration) bool {
	t := time.NewTimer(wait)
	defer t.Stop()
	sent := make(chan struct{})
	select {
	case a.ops <- ackOp{kind: opFlush, sent: sent}:
	case <-t.C:
		return false
	}
	select {
	case <-sent:
		return true
	case <-t.C:
		return false
	}
}
