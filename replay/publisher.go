package replay

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"regexp"
	"slices"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/retrycore"
)

// job is one message to publish.
type job struct {
	held     *broker.Held // the parked copy, acked after the confirm; nil for import
	id       string       // for reports
	key      string       // identity across the passes of one run
	replayID string       // "" for import (the message is restored as it was)
	dest     retrycore.Destination
	pub      amqp.Publishing
	// entry is the run's part of the job's audit entry (action, queue or
	// file), shared by its jobs; the committer adds the job's own
	// (run.entriesOf).
	entry *AuditEntry
	// auditID is the entry's message id when it is not id (an import's id
	// names its line).
	auditID string
	sends   int
	counted bool     // a re-send of a copy already counted as done (see pendingCopy)
	resets  []string // the retry counters the copy has reset (Transform)
}

// settled is a job whose fate is known.
type settled struct {
	job *job
	err error // nil: the broker confirmed a routed copy
}

type flight struct {
	job      *job
	returned *amqp.Return
}

// maxSends bounds how often one message is re-sent after its channel or
// connection was lost, so a message that itself breaks the channel cannot
// loop.
const maxSends = 4

// publisher publishes with confirms and mandatory on one channel of the
// publishing connection, keeping the unconfirmed messages so that a lost
// channel or connection costs nothing: they are re-sent (same x-replay-id)
// on a new one. It is driven by one goroutine (the run's publish loop).
type publisher struct {
	s      *Session
	window int
	conn   *broker.Conn
	ch     *amqp.Channel
	broken error // set when no channel could be reopened

	confirms chan amqp.Confirmation
	returns  chan amqp.Return
	closes   chan *amqp.Error

	tag      uint64 // delivery tag of the last publish on ch
	inflight map[uint64]*flight
	byRID    map[string]*flight

	exchanges map[string]error // existence, checked once per exchange
	reopens   int
}

func newPublisher(ctx context.Context, s *Session, window int) (*publisher, error) {
	conn, err := s.publisherConn(ctx)
	if err != nil {
		return nil, err
	}
	p := &publisher{s: s, window: window, conn: conn, exchanges: map[string]error{}}
	if err := p.open(); err != nil {
		return nil, err
	}
	return p, nil
}

func (p *publisher) open() error {
	ch, err := p.conn.Channel()
	if err != nil {
		return fmt.Errorf("open publish channel: %w", broker.Explain(err))
	}
	if err := ch.Confirm(false); err != nil { // noWait false
		_ = ch.Close()
		return fmt.Errorf("confirm mode: %w", broker.Explain(err))
	}
	// Buffers hold a whole window: amqp091-go drops a notification that
	// waits longer than 5s on a full channel, and a lost confirm would
	// leave a message in flight forever.
	p.confirms = ch.NotifyPublish(make(chan amqp.Confirmation, p.window+8))
	p.returns = ch.NotifyReturn(make(chan amqp.Return, p.window+8))
	p.closes = ch.NotifyClose(make(chan *amqp.Error, 1))
	p.ch = ch
	p.tag = 0
	p.inflight = map[uint64]*flight{}
	p.byRID = map[string]*flight{}
	return nil
}

// idle reports whether nothing is waiting for a confirm.
func (p *publisher) idle() bool { return len(p.inflight) == 0 }

// confirmations is the channel the publish loop selects on (nil when the
// publisher is broken, so the loop does not spin on a closed channel).
func (p *publisher) confirmations() <-chan amqp.Confirmation {
	if p.broken != nil {
		return nil
	}
	return p.confirms
}

func (p *publisher) close() {
	if p.ch != nil {
		// Bounded: in a cluster minority the broker never answers the close
		// of a channel with unconfirmed publishes.
		if err := p.conn.CloseChannel(p.ch); errors.Is(err, broker.ErrCloseUnanswered) {
			p.s.log.Warn("publish channel close unanswered; connection dropped", "err", err)
		}
	}
}

// abandon drops the publishing connection at once, with no close
// handshake, after a run gave up on the broker's confirms: what was in
// flight is settled already (outcome unknown, still parked), and a broker
// that confirms nothing does not answer a close either (package doc,
// "Clusters"). The publisher is broken from then on.
func (p *publisher) abandon() {
	p.conn.Drop()
	if p.broken == nil {
		p.broken = errors.New("publishing abandoned: the broker confirmed nothing in time")
	}
}

// send publishes j. It returns the jobs whose fate is already known: j
// itself when its exchange is missing, and the messages settled while
// recovering a lost channel.
func (p *publisher) send(ctx context.Context, j *job) []settled {
	var out []settled
	queue := []*job{j}
	for len(queue) > 0 {
		j := queue[0]
		queue = queue[1:]
		if p.broken != nil {
			out = append(out, settled{j, p.broken})
			continue
		}
		if j.sends >= maxSends {
			out = append(out, settled{j, fmt.Errorf("%s: the publish channel closed %d times while sending it", j.dest, j.sends)})
			continue
		}
		if err := p.exchangeErr(j.dest.Exchange); err != nil {
			out = append(out, settled{j, err})
			continue
		}
		err := p.ch.PublishWithContext(ctx, j.dest.Exchange, j.dest.RoutingKey,
			true,  // mandatory: an unroutable copy comes back as basic.return
			false, // immediate (unsupported by RabbitMQ)
			j.pub)
		if err == nil {
			p.track(j)
			continue
		}
		if !channelGone(err, p.ch.IsClosed(), p.conn.IsClosed()) { // refused before sending, e.g. a header type AMQP cannot carry
			out = append(out, settled{j, fmt.Errorf("publish to %s: %w", j.dest, broker.Explain(err))})
			continue
		}
		settledNow, resend := p.recover(ctx)
		out = append(out, settledNow...)
		queue = append(append(resend, j), queue...)
	}
	return out
}

// track keeps j in flight under the delivery tag of its publish.
func (p *publisher) track(j *job) {
	j.sends++
	p.tag++
	f := &flight{job: j}
	p.inflight[p.tag] = f
	if j.replayID != "" {
		p.byRID[j.replayID] = f
	}
}

// channelGone reports whether a failed publish failed because its channel
// or connection is going away (re-send it on a new one), not because the
// message itself was refused. amqp091-go marks a dying connection closed
// before it closes its channels, so a publish in between fails with
// ErrClosed, or with the socket's write error, while the channel still
// looks open.
func channelGone(err error, chClosed, connClosed bool) bool {
	if chClosed || connClosed || errors.Is(err, amqp.ErrClosed) || errors.Is(err, net.ErrClosed) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrClosedPipe) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne)
}

// confirmed handles a confirmation and every other one already buffered:
// one batch, so the committer can write their audit entries with one fsync.
func (p *publisher) confirmed(ctx context.Context, first amqp.Confirmation) []settled {
	cs := []amqp.Confirmation{first}
	closed := false
more:
	for len(cs) < 4*p.window {
		select {
		case c, ok := <-p.confirms:
			if !ok {
				closed = true
				break more
			}
			cs = append(cs, c)
		default:
			break more
		}
	}
	// The broker sends basic.return before the basic.ack of the same
	// message, and amqp091-go's reader hands both over in that order; so
	// once an ack is here its return (if any) is in the buffer.
	p.drainReturns()
	out := make([]settled, 0, len(cs))
	for _, c := range cs {
		if s, ok := p.settle(c.DeliveryTag, c.Ack); ok {
			out = append(out, s)
		}
	}
	if closed {
		out = append(out, p.lost(ctx)...)
	}
	return out
}

// lost handles the confirmation channel closing (the channel or the
// connection went away) and re-sends what was in flight.
func (p *publisher) lost(ctx context.Context) []settled {
	out, resend := p.recover(ctx)
	for _, j := range resend {
		out = append(out, p.send(ctx, j)...)
	}
	return out
}

func (p *publisher) settle(tag uint64, ack bool) (settled, bool) {
	f, ok := p.inflight[tag]
	if !ok {
		return settled{}, false
	}
	delete(p.inflight, tag)
	if f.job.replayID != "" {
		delete(p.byRID, f.job.replayID)
	}
	switch {
	case !ack:
		return settled{f.job, fmt.Errorf("%s: %w", f.job.dest, broker.ErrNacked)}, true
	case f.returned != nil:
		return settled{f.job, unroutable(f.job.dest, f.returned)}, true
	}
	return settled{f.job, nil}, true
}

func unroutable(d retrycore.Destination, r *amqp.Return) error {
	return fmt.Errorf("%s: %w (%s)", d, ErrUnroutable, r.ReplyText)
}

// drainReturns attaches every buffered basic.return to its flight: by
// x-replay-id, or (import, which adds no header) by content, oldest first,
// since returns arrive in publish order.
func (p *publisher) drainReturns() {
	for {
		select {
		case r, ok := <-p.returns:
			if !ok {
				return
			}
			p.attach(r)
		default:
			return
		}
	}
}

func (p *publisher) attach(r amqp.Return) {
	if rid, ok := r.Headers[retrycore.HeaderReplayID].(string); ok {
		if f := p.byRID[rid]; f != nil && f.returned == nil {
			f.returned = &r
			return
		}
	}
	var best *flight
	var bestTag uint64
	for tag, f := range p.inflight {
		if f.returned != nil || (best != nil && tag > bestTag) {
			continue
		}
		pb := f.job.pub
		if f.job.dest.Exchange == r.Exchange && f.job.dest.RoutingKey == r.RoutingKey &&
			pb.MessageId == r.MessageId && bytes.Equal(pb.Body, r.Body) {
			best, bestTag = f, tag
		}
	}
	if best != nil {
		best.returned = &r
	}
}

var exchangeInReason = regexp.MustCompile(`exchange '([^']*)'`)

// recover deals with a closed channel: it settles what was confirmed before
// the close, fails the messages the close was about (a missing exchange),
// and opens a new channel (re-dialling a lost connection) on which the
// rest is to be re-sent.
func (p *publisher) recover(ctx context.Context) (out []settled, resend []*job) {
	// Everything the reader delivered before the close is buffered; the
	// listener channels are closed right after.
	var cs []amqp.Confirmation
	timeout := time.NewTimer(5 * time.Second)
	defer timeout.Stop()
drain:
	for {
		select {
		case c, ok := <-p.confirms:
			if !ok {
				break drain
			}
			cs = append(cs, c)
		case <-timeout.C:
			break drain
		}
	}
	p.drainReturns()
	for _, c := range cs {
		if s, ok := p.settle(c.DeliveryTag, c.Ack); ok {
			out = append(out, s)
		}
	}
	var cerr *amqp.Error
	select {
	case cerr = <-p.closes:
	default:
	}
	connLost := p.conn.IsClosed()
	bad, badErr, badFound := "", error(nil), false
	if cerr != nil && !connLost {
		if m := exchangeInReason.FindStringSubmatch(cerr.Reason); m != nil {
			bad, badFound = m[1], true
			if bad == "amq.default" { // the default exchange, as jobs name it: a user without write permission
				bad = ""
			}
			badErr = p.exchangeError(bad, broker.Explain(cerr))
			p.exchanges[bad] = badErr
		}
	}
	tags := make([]uint64, 0, len(p.inflight))
	for t := range p.inflight {
		tags = append(tags, t)
	}
	slices.Sort(tags)
	var why error = errors.New("publish channel closed")
	if cerr != nil {
		why = broker.Explain(cerr)
	}
	for _, t := range tags {
		f := p.inflight[t]
		switch {
		case f.returned != nil:
			out = append(out, settled{f.job, unroutable(f.job.dest, f.returned)})
		case badFound && f.job.dest.Exchange == bad:
			out = append(out, settled{f.job, badErr})
		case connLost || badFound:
			resend = append(resend, f.job)
		default:
			out = append(out, settled{f.job, fmt.Errorf("%s: not confirmed: %w", f.job.dest, why)})
		}
	}
	p.inflight, p.byRID = map[uint64]*flight{}, map[string]*flight{}
	p.reopens++
	if err := p.reopen(ctx, connLost); err != nil {
		p.broken = err
		for _, j := range resend {
			out = append(out, settled{j, err})
		}
		return out, nil
	}
	if connLost {
		p.s.log.Warn("publish connection lost; re-sent the unconfirmed messages on a new one", "messages", len(resend))
	}
	return out, resend
}

func (p *publisher) reopen(ctx context.Context, connLost bool) error {
	if p.reopens > 1000 {
		return errors.New("the publish channel keeps closing; giving up")
	}
	if connLost || p.conn.IsClosed() {
		conn, err := p.s.publisherConn(context.WithoutCancel(ctx))
		if err != nil {
			return fmt.Errorf("publish connection lost and not re-established: %w", err)
		}
		p.conn = conn
		// Access checks are per connection; existence may have changed.
		p.exchanges = map[string]error{}
	}
	return p.open()
}

// exchangeErr checks once per exchange that it exists (a passive declare
// on a throwaway channel), so a missing exchange is one clear error and
// not a closed publish channel.
func (p *publisher) exchangeErr(name string) error {
	if err, ok := p.exchanges[name]; ok {
		return err
	}
	if name == "" { // the default exchange always exists; a refused publish is remembered by recover
		return nil
	}
	ch, err := p.conn.Channel()
	if err != nil {
		return nil // let the publish itself tell
	}
	err = ch.ExchangeDeclarePassive(name, amqp.ExchangeDirect, // kind is ignored when passive
		true,  // durable
		false, // autoDelete
		false, // internal
		false, // noWait
		nil)
	if err == nil {
		_ = ch.Close()
		p.exchanges[name] = nil
		return nil
	}
	e := broker.Explain(err)
	if errors.Is(e, broker.ErrNotFound) || errors.Is(e, broker.ErrAccessRefused) {
		p.exchanges[name] = p.exchangeError(name, e)
		return p.exchanges[name]
	}
	return nil
}

func (p *publisher) exchangeError(name string, err error) error {
	if errors.Is(err, broker.ErrNotFound) {
		return &sentinelError{kind: broker.ErrNotFound, msg: fmt.Sprintf("exchange %q does not exist in vhost %q", name, p.s.vhost())}
	}
	return err
}
