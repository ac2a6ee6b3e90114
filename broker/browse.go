package broker

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// ErrWrongQueueType marks a queue parkinglot cannot browse (streams).
var ErrWrongQueueType = errors.New("wrong queue type")

// ErrStalled marks a pass the broker sends nothing to although messages
// are ready: a stream (without the management API to tell its type) or a
// queue whose single active consumer is someone else.
var ErrStalled = errors.New("browse stalled")

// stallAfter is how long Next waits for a delivery while messages are
// ready before it gives up with ErrStalled (a ready message is pushed at
// once to a consumer with room in its prefetch; a stream or a
// single-active-consumer queue held by another sends nothing at all). It
// also ends a pass on a quorum queue that lost its majority, which is
// silent too: such a queue neither delivers nor refuses.
//
// A classic queue that has delivered to the pass is another matter: it
// cannot lose a majority (it lives on one node; when that node goes, the
// broker cancels the consumer, which is not silence), and it is ours as a
// single active consumer once it delivered; a pause there is the broker
// being slow. RabbitMQ 3.10.8 paused a 1,000,000-message classic queue for
// more than 15 s at 400k held (measured), so such a pass waits
// stallAfterClassic.
const (
	stallAfter        = 15 * time.Second
	stallAfterClassic = 5 * time.Minute
)

// PassOptions configure one pass over a queue.
type PassOptions struct {
	Queue string
	// Limit stops the pass after this many messages (0: every message that
	// was ready when the pass began).
	Limit int
	// Management, when set, tells the queue type and effective delivery
	// limit. Without it quorum queues are protected conservatively.
	Management *Management
	Logger     *slog.Logger
	// Alone: begin only if the queue has no consumers (ErrOthersConsume),
	// asked just before consuming: a pass that does not have to run now (a
	// watch's scan) must not hold messages another consumer's pass would
	// then miss.
	Alone bool
}

// QueueFacts is what a pass learned about its queue before consuming.
type QueueFacts struct {
	Name          string
	Type          string // classic | quorum | "" when unknown
	Ready         int
	DeliveryLimit DeliveryLimit
	LimitKnown    bool // false: no management API; the limit is assumed
	// DelayedRetry is the queue's delayed retry (RabbitMQ 4.3+); where it
	// delays a give-back, the pass re-publishes what it held instead.
	DelayedRetry DelayedRetry
	// ConsumerTimeout is the queue's own consumer timeout (the
	// x-consumer-timeout argument or the consumer-timeout policy key;
	// 0: none set, the broker's consumer_timeout applies).
	ConsumerTimeout time.Duration
}

// PassReport says what a pass did to the queue.
type PassReport struct {
	Seen      int `json:"seen"`       // deliveries handed to the caller
	Taken     int `json:"taken"`      // acknowledged (removed) by the caller
	GivenBack int `json:"given_back"` // returned with basic.nack(requeue)
	// Refreshed messages were re-published to the queue's tail (confirmed)
	// and the held copy acked, because giving them back would have brought
	// them to the quorum queue's delivery limit.
	Refreshed int `json:"refreshed"`
	// HeldToKeepOrder messages were held after the caller ended the pass,
	// to give them back with the rest in order on a queue that does not
	// put a given-back message back in its place (browse_order.go): the
	// rest of a pass ended early, and what a quorum queue pushed past the
	// end. They are counted in GivenBack (or Refreshed), not in Seen.
	HeldToKeepOrder int `json:"held_to_keep_order,omitempty"`
	// Notes are what the user should know of the pass (ui/format words
	// them; ui/cli puts them in -o json).
	Notes []Note `json:"-"`
}

// Pass is one non-destructive pass over a queue's current contents. Every
// delivery is held unacknowledged; the caller may Ack some (after it has
// safely copied them elsewhere); Close gives the rest back: on a quorum
// queue (or one of unknown type) with basic.nack(multiple, requeue) — not
// by closing the channel, which counts against quorum delivery limits on
// every version; on a classic queue, which has no delivery limit, by
// closing the channel, which RabbitMQ requeues far faster.
//
// On a quorum queue a give-back increments x-delivery-count, and RabbitMQ
// drops or dead-letters a message whose count passes the queue's delivery
// limit. A pass never causes that: a message whose give-back would leave it
// less than one give-back from the limit is refreshed instead.
type Pass struct {
	conn   *Conn
	ch     *amqp.Channel
	facts  QueueFacts
	log    *slog.Logger
	tag    string
	target int
	// full is the ready count when the pass began; order says how the
	// give-back keeps the queue's order (browse_order.go).
	full  int
	order orderRule
	idle  time.Duration
	// idleTimer bounds each Next's wait for a delivery (only Next uses it).
	idleTimer *time.Timer

	closed chan *amqp.Error
	// revoked: the broker cancelled one of the pass's consumers (its queue
	// deleted, its node down, its consumer timeout). What that consumer
	// held went back to the queue, or is gone with it, and an ack sent
	// after is dropped without a word (RabbitMQ 4.3's quorum consumer
	// timeout), so no ack is sent or reported done after it.
	revoked atomic.Bool

	// consumers are the pass's segments in order (one unless paced);
	// drained counts those the caller has read to the end.
	consumers []*consumer
	drained   int
	// paced: a pass larger than a window is consumed in segments (see
	// browse_pace.go).
	paced bool

	mu sync.Mutex
	// segFirstTag is the newest segment's first delivery tag, segSettled
	// how many of its deliveries were acked (each lets the broker send it
	// one more; see browse_pace.go).
	segFirstTag uint64
	segSettled  int
	seen        int
	taken       int
	atRisk      map[uint64]Message // held messages that must be refreshed, not given back
	acked       map[uint64]bool
	nextTag     uint64 // lowest delivery tag not acked (0: none yet, i.e. 1)
	lastTag     uint64 // highest delivery tag handed over
	// sawDeliveryCount: some delivery carried x-delivery-count (quorum).
	sawDeliveryCount bool
	// pending are deliveries one lost connection from the delivery limit,
	// read but not yet made safe nor handed over; handover, those that
	// could not be made safe, to hand over as held (browse_safe.go).
	// eagerRefreshed counts those made safe; safeErr is why one was not.
	pending        []*Held
	handover       []*Held
	eagerRefreshed int
	eagerHighest   int64 // the highest x-delivery-count made safe
	safeErr        error
	// riskWindow is the next segment's window on a queue with a delivery
	// limit (0: the usual window); segAtRisk, the newest segment met a
	// message one lost connection from the limit.
	riskWindow int
	segAtRisk  bool
	// returns receives copies the broker returned (confirm mode is on once
	// it is set).
	returns <-chan amqp.Return
	done    bool
	report  PassReport
	lastErr error
}

// Held is one delivery held by a pass.
type Held struct {
	Message
	DeliveryCount int64 // x-delivery-count when delivered (quorum)
	pass          *Pass
	// shared: the pass keeps the message too, to re-publish it if it is
	// given back (refresh): its headers are not the holder's to change.
	shared bool
	// atRisk: one lost connection would drop it; the pass makes it safe
	// before handing anything over (browse_safe.go).
	atRisk bool
}

// OwnsHeaders reports whether the holder may change the message's headers
// in place: no one else reads them (the pass keeps a message it may have
// to re-publish, and reads its headers then).
func (h *Held) OwnsHeaders() bool { return !h.shared }

// Ack removes the message from the queue. Call it only after the copy the
// caller made is safe (confirmed by the broker, written to a file).
func (h *Held) Ack() error { return h.pass.ack(h.DeliveryTag) }

// OpenPass starts a pass over opts.Queue on its own channel of conn.
func OpenPass(ctx context.Context, conn *Conn, opts PassOptions) (*Pass, error) {
	facts, notes, err := learnQueue(ctx, conn, opts)
	if err != nil {
		return nil, err
	}
	ch, err := conn.Channel()
	if err != nil {
		return nil, fmt.Errorf("browse %s: open channel: %w", opts.Queue, Explain(err))
	}
	counts, err := readyCounts(ctx, ch, facts)
	if err != nil {
		return nil, fmt.Errorf("browse: %w", Explain(err))
	}
	if opts.Alone && counts.Consumers > 0 {
		_ = conn.CloseChannel(ch)
		return nil, fmt.Errorf("browse %s: %w: the pass did not begin", opts.Queue, ErrOthersConsume)
	}
	ready := counts.Messages
	facts.Ready = ready
	p := &Pass{
		conn:   conn,
		ch:     ch,
		facts:  facts,
		log:    opts.Logger,
		tag:    "parkinglot-browse-" + strconv.FormatInt(time.Now().UnixNano(), 36),
		target: ready,
		full:   ready,
		order:  orderRuleFor(facts, conn.ServerVersion),
		idle:   250 * time.Millisecond,
		atRisk: map[uint64]Message{},
		acked:  map[uint64]bool{},
		closed: ch.NotifyClose(make(chan *amqp.Error, 1)),
	}
	// amqp091-go sends each cancel the broker sends on this channel, and
	// closes the channel it sends them on when the AMQP channel closes.
	cancels := ch.NotifyCancel(make(chan string, 4))
	go func() {
		for range cancels {
			p.revoked.Store(true)
		}
	}()
	p.report.Notes = notes
	p.othersSeen(counts.Consumers)
	if p.limitedWindow() {
		p.riskWindow = riskWindowStart
	}
	if opts.Limit > 0 && opts.Limit < p.target {
		p.target = opts.Limit
	}
	if p.target == 0 {
		return p, nil
	}
	// Prefetch bounds what the broker pushes: holding the whole pass needs
	// room for every message, and no more (the rest would be given back
	// too, and counted on quorum queues). A pass that would hold the rest
	// after an early end counts the rest in. A pass larger than a window
	// is consumed in segments (browse_pace.go), on every queue type:
	// amqp091-go caps a prefetch at 65,535, and without one a quorum queue
	// stops at 2,000 unsettled deliveries (rabbit_fifo_client's
	// UNLIMITED_PREFETCH_COUNT), while the pass settles nothing until it
	// closes.
	prefetch := p.target
	if p.order.holdAll {
		prefetch = p.full
	}
	if w := p.window(); prefetch > w {
		p.paced, prefetch = true, w
	}
	if _, err := p.consume(ctx, prefetch); err != nil {
		_ = conn.CloseChannel(ch)
		return nil, err
	}
	return p, nil
}

// learnQueue reads the queue type and delivery limit from the management
// API; without it the pass protects quorum messages conservatively.
func learnQueue(ctx context.Context, conn *Conn, opts PassOptions) (QueueFacts, []Note, error) {
	facts := QueueFacts{Name: opts.Queue}
	if opts.Management == nil {
		return facts, []Note{{Kind: NoteNoManagement}}, nil
	}
	info, err := opts.Management.Queue(ctx, opts.Queue)
	switch {
	case errors.Is(err, ErrNotFound):
		return facts, nil, fmt.Errorf("browse: %w", err)
	case err != nil:
		return facts, []Note{{Kind: NoteManagementFailed, Err: err}}, nil
	}
	facts.Type = info.Type
	if info.Type == "stream" {
		return facts, nil, fmt.Errorf("browse %s: %w: it is a stream; parkinglot browses classic and quorum queues", opts.Queue, ErrWrongQueueType)
	}
	version := conn.ServerVersion
	facts.ConsumerTimeout = QueueConsumerTimeout(info)
	facts.DeliveryLimit = EffectiveDeliveryLimit(info, version)
	facts.LimitKnown = true
	var notes []Note
	if info.Type == "quorum" && !facts.DeliveryLimit.Unlimited() {
		notes = append(notes, Note{Kind: NoteQuorumLimit, Limit: facts.DeliveryLimit})
	}
	// Older versions accept the arguments and ignore them.
	if version.AtLeast(4, 3, 0) || !version.Known() {
		facts.DelayedRetry = QueueDelayedRetry(info)
	}
	if facts.DelayedRetry.On() {
		n := Note{Kind: NoteDelayedRetry, Delayed: facts.DelayedRetry, Count: int(info.MessagesDelayed)}
		// The management API's count lags by seconds: waiting out the
		// longest delay brings back every message it counted.
		if wait := facts.DelayedRetry.Longest(); n.Count > 0 && wait > 0 && wait <= ShortDelay {
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				return facts, nil, ctx.Err()
			case <-t.C:
			}
			n.Wait = wait
		}
		notes = append(notes, n)
	}
	return facts, notes, nil
}

// stallLimit is how long a pass that has seen seen messages of a queue of
// this type waits for a delivery while messages are ready (see stallAfter).
func stallLimit(queueType string, seen int) time.Duration {
	if queueType == "classic" && seen > 0 {
		return stallAfterClassic
	}
	return stallAfter
}

// answerWait bounds the wait for the broker's answer to the pass's cancels
// and close: a classic queue that has delivered is waited for as long as
// its deliveries are (see stallAfter); any other, CloseWait.
func (p *Pass) answerWait() time.Duration {
	p.mu.Lock()
	seen := p.seen
	p.mu.Unlock()
	if stallLimit(p.facts.Type, seen) == stallAfterClassic {
		return stallAfterClassic
	}
	return CloseWait
}

// othersSeen notes other consumers on the queue (a service, a replay,
// another browse, a watch's scan): what they hold is neither ready nor
// delivered to the pass, so the pass does not see it. Told once a pass,
// with the most seen.
func (p *Pass) othersSeen(n int) {
	if n <= 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, o := range p.report.Notes {
		if o.Kind == NoteOtherConsumers {
			p.report.Notes[i].Count = max(o.Count, n)
			return
		}
	}
	p.report.Notes = append(p.report.Notes, Note{Kind: NoteOtherConsumers, Count: n})
}

// Facts returns what the pass learned about the queue.
func (p *Pass) Facts() QueueFacts { return p.facts }

// Next returns the next held delivery, or io.EOF when the pass has seen
// every message that was ready when it began (or opts.Limit of them). A
// message one lost connection from its queue's delivery limit is made safe
// first (browse_safe.go): its re-published copy is handed over when the
// pass comes to it.
func (p *Pass) Next(ctx context.Context) (*Held, error) {
	for {
		if len(p.handover) > 0 {
			h := p.handover[0]
			p.handover = p.handover[1:]
			return h, nil
		}
		if len(p.pending) >= riskWindowStart {
			p.makeSafe(ctx)
			continue
		}
		h, err := p.next(ctx, len(p.pending) > 0)
		switch {
		case err == errNoneReady || (err != nil && len(p.pending) > 0 && ctx.Err() == nil && !p.ch.IsClosed()):
			// Nothing more is here yet, or the pass is at its end: make
			// safe what is pending before waiting or ending.
			p.makeSafe(ctx)
			continue
		case err != nil:
			return nil, err
		case h.atRisk:
			p.pending = append(p.pending, h)
			continue
		}
		return h, nil
	}
}

// errNoneReady: next was asked not to wait, and no delivery is here.
var errNoneReady = errors.New("no delivery ready")

// next is Next without making messages safe: poll returns errNoneReady
// rather than wait for a delivery.
func (p *Pass) next(ctx context.Context, poll bool) (*Held, error) {
	p.mu.Lock()
	seen, done := p.seen, p.done
	p.mu.Unlock()
	if done {
		return nil, errors.New("browse: pass is closed")
	}
	if seen >= p.target {
		return nil, io.EOF
	}
	if p.paced {
		if err := p.pace(ctx); err != nil {
			return nil, err
		}
	}
	// A delivery already here needs no timer: while a pass streams, that
	// is almost every call.
	if ctx.Err() == nil {
		if h, ok, err := p.receiveReady(); ok {
			return h, err
		}
	}
	if poll {
		return nil, errNoneReady
	}
	// One timer for the pass, reset for each call: Next runs once a
	// message, and since Go 1.23 a Reset timer never delivers a stale tick.
	if p.idleTimer == nil {
		p.idleTimer = time.NewTimer(p.idle)
	} else {
		p.idleTimer.Reset(p.idle)
	}
	timer := p.idleTimer
	defer timer.Stop()
	waiting := time.Now()
	for {
		if h, timedOut, err := p.receive(ctx, timer.C); !timedOut {
			return h, err
		}
		// Someone else may have taken messages since the pass began: when
		// nothing is ready any more, the pass is complete.
		counts, err := readyCounts(ctx, p.ch, p.facts)
		if err != nil {
			return nil, fmt.Errorf("browse %s: %w", p.facts.Name, Explain(err))
		}
		ready := counts.Messages
		if p.revoked.Load() {
			// The broker cancelled a consumer of the pass: what it held
			// went back to the queue, so an empty answer is no end.
			return nil, fmt.Errorf("browse %s: %w", p.facts.Name, ErrConsumerCancelled)
		}
		unanswered := ready == 0 && p.unanswered(counts)
		if ready == 0 && !unanswered {
			p.othersSeen(counts.Consumers - 1) // the pass's own consumer is one
			return p.lastDelivery(ctx)
		}
		limit := stallLimit(p.facts.Type, seen)
		if p.owedForAcks() {
			limit = stallAfterClassic
		}
		if unanswered && time.Since(waiting) > limit {
			return nil, fmt.Errorf("browse %s: %w: the quorum queue has not told its ready count for %v (its leader moving?) after %d", p.facts.Name, ErrStalled, limit, seen)
		}
		if time.Since(waiting) > limit {
			if seen > 0 {
				p.mu.Lock()
				taken := "nothing was taken"
				if p.taken > 0 {
					taken = fmt.Sprintf("only the %d acked were taken", p.taken)
				}
				p.mu.Unlock()
				return nil, fmt.Errorf("browse %s: %w: %d message(s) ready but the broker delivered none in %v after %d; %s",
					p.facts.Name, ErrStalled, ready, limit, seen, taken)
			}
			return nil, fmt.Errorf("browse %s: %w: %d message(s) ready but the broker delivered none in %v: is it a stream (parkinglot browses classic and quorum queues; the management API would tell) or a single-active-consumer queue held by another consumer? Nothing was taken",
				p.facts.Name, ErrStalled, ready, limit)
		}
		timer.Reset(p.idle)
	}
}

// hold takes a delivery the pass read. One the caller reads (eager) that
// one lost connection would drop is marked atRisk and not counted as seen
// yet: Next makes it safe before anything else (browse_safe.go).
func (p *Pass) hold(d amqp.Delivery, eager bool) *Held {
	h := &Held{Message: FromDelivery(d), pass: p}
	n, counted := IntValue(d.Headers["x-delivery-count"])
	h.DeliveryCount = n
	p.mu.Lock()
	p.sawDeliveryCount = p.sawDeliveryCount || counted
	p.lastTag = max(p.lastTag, d.DeliveryTag)
	if eager && p.dropsOnLoss(h) {
		h.atRisk, h.shared = true, true
		p.segAtRisk = true
		p.mu.Unlock()
		return h
	}
	p.seen++
	if p.mustRefresh(h) {
		p.atRisk[d.DeliveryTag] = h.Message
		h.shared = true
	}
	p.mu.Unlock()
	return h
}
