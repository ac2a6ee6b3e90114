package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/retrycore"
)

// session is one pair of connections and everything bound to them: the
// consume channel, its acker, and the workers with their publish channels.
// Delivery tags belong to the session's channel, so a session never acks
// anything for another.
type session struct {
	o   *RunOptions
	h   Handler
	log *slog.Logger

	consume, publish *broker.Conn
	cch              *amqp.Channel
	deliveries       <-chan amqp.Delivery
	tag              string
	user             string // our AMQP user, for the user_id rule

	acker *acker
	gate  blockGate
	// stopping is closed when the session winds down (shutdown or loss):
	// dispatch stops and requeue backoffs are cut short.
	stopping chan struct{}
	// consumeLost is set when the consume channel is gone: its deliveries
	// will be redelivered, so a worker must not publish copies for them.
	consumeLost atomic.Bool
}

// run dispatches deliveries to the workers until ctx is cancelled (it
// returns nil) or a connection is lost (it returns why), and returns only
// after every worker finished and every ack went out.
func (s *session) run(ctx context.Context) error {
	p := s.o.Pipeline
	consumeClosed := s.consume.NotifyClose(make(chan *amqp.Error, 1))
	publishClosed := s.publish.NotifyClose(make(chan *amqp.Error, 1))
	channelClosed := s.cch.NotifyClose(make(chan *amqp.Error, 1))
	cancelled := s.cch.NotifyCancel(make(chan string, 1))
	s.publish.WatchBlocked(s.log, func(blocked bool, _ string) { s.gate.set(blocked) })
	s.consume.WatchBlocked(s.log, nil)

	s.stopping = make(chan struct{})
	s.acker = newAcker(s.cch, 2*p.Prefetch+2*p.Concurrency+16, s.log)
	go s.acker.run()

	work := make(chan amqp.Delivery)
	var workers sync.WaitGroup
	pub := &publisher{conn: s.publish, timeout: s.o.PublishTimeout, gate: &s.gate, inFlight: p.Prefetch + p.Concurrency}
	// Each worker may have its share of the prefetch awaiting confirms.
	window := max(4, (p.Prefetch+p.Concurrency-1)/p.Concurrency)
	for i := 0; i < p.Concurrency; i++ {
		w := &worker{s: s, pub: pub}
		workers.Add(1)
		go func() {
			defer workers.Done()
			w.run(work, window)
		}()
	}
	dispatched := make(chan struct{})
	go func() {
		defer close(dispatched)
		s.dispatch(work)
	}()

	var lost error
	select {
	case <-ctx.Done():
	case e := <-consumeClosed:
		s.consumeLost.Store(true)
		lost = closeReason("consume connection", e)
	case e := <-channelClosed:
		s.consumeLost.Store(true)
		lost = closeReason("consume channel", e)
	case e := <-publishClosed:
		lost = closeReason("publish connection", e)
	case tag := <-cancelled:
		// The queue was deleted, or a cluster node went away: redeclare.
		lost = fmt.Errorf("the broker cancelled consumer %s", tag)
	}
	if s.o.OnStopped != nil {
		s.o.OnStopped() // not ready from now: draining, then re-dialling
	}
	// Stop: dispatch starts no more work and holds what arrives (it stays
	// within the prefetch: nothing is given back while work is finishing,
	// which would only have the broker deliver it again at once).
	close(s.stopping)
	workers.Wait() // dispatch closed work: every started message is settled, every sent copy too
	pub.close()
	if !s.consumeLost.Load() {
		if !s.acker.flush(broker.CloseWait) {
			s.log.Warn("acks not sent within the close wait; the cancel follows (what the broker did not apply comes back)", "wait", broker.CloseWait)
		}
		// The consumer's cancel is the broker's proof that it applied the
		// acks sent before it: a quorum queue sends the channel's held-back
		// acks of the consumer before the cancel and answers once the
		// cancel is applied, after them. Closing the channel without it
		// drops the acks the queue holds back (past its soft limit of
		// unapplied commands) and the broker hands those messages out
		// again. amqp091-go then hands over what it buffered and closes
		// the deliveries.
		if err := s.consume.Bounded("cancel consumer", broker.CloseWait, func() error { return s.cch.Cancel(s.tag, false /* wait for cancel-ok */) }); err != nil {
			s.log.Debug("cancel consumer", "err", err)
			// The channel goes (or its connection was dropped): the delivery
			// tags die with it and the broker redelivers.
			s.consumeLost.Store(true)
			_ = s.cch.Close() // closes deliveries; the broker requeues
		}
	}
	<-dispatched
	// Give back what was held, unstarted, in one frame.
	s.acker.requeueRest()
	close(s.acker.ops)
	<-s.acker.done
	_ = s.consume.CloseChannel(s.cch)
	_ = s.consume.Close()
	_ = s.publish.Close()
	return lost
}

func closeReason(what string, e *amqp.Error) error {
	if e == nil {
		return fmt.Errorf("%s closed", what)
	}
	return fmt.Errorf("%s closed: %w", what, broker.Explain(e))
}

// dispatch hands deliveries to idle workers, registering each with the
// acker first. Once the session is stopping it closes work and holds what
// arrives, unstarted, until amqp091-go closes the deliveries (after the
// consumer's cancel); run then gives them back.
func (s *session) dispatch(work chan<- amqp.Delivery) {
	handing := true
	stop := func() {
		if handing {
			handing = false
			close(work)
		}
	}
	defer stop()
	for {
		var d amqp.Delivery
		var ok bool
		if handing {
			select {
			case d, ok = <-s.deliveries:
			case <-s.stopping:
				stop()
				continue
			}
		} else {
			d, ok = <-s.deliveries
		}
		if !ok {
			return
		}
		s.acker.deliver(d.DeliveryTag)
		select {
		case <-s.stopping:
			stop()
		default:
		}
		if handing {
			select {
			case work <- d:
				continue
			case <-s.stopping:
				stop()
			}
		}
		s.heldBack(d)
	}
}

// heldBack counts a delivery that arrived while stopping: it is given back
// unstarted.
func (s *session) heldBack(d amqp.Delivery) {
	s.o.Metrics.outcome(OutcomeLabelRequeued)
	s.settled(Result{MessageID: broker.FromDelivery(d).ID(), Attempt: int(retrycore.RetriesDone(d.Headers)) + 1, Outcome: OutcomeLabelRequeued})
}

func (s *session) settled(r Result) {
	if s.o.OnSettled != nil {
		s.o.OnSettled(r)
	}
}

// errConsumeLost is the Result.Err of a message whose consume channel went
// away while it was handled: the broker redelivers it.
var errConsumeLost = errors.New("consume channel lost; the broker redelivers the message")
