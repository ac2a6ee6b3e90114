package retrycore

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker"
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
	close(s.stopping)
	if !s.consumeLost.Load() {
		// basic.cancel stops new deliveries; amqp091-go then hands over what
		// it buffered and closes the channel, and dispatch gives those back.
		if err := s.consume.Bounded("cancel consumer", broker.CloseWait, func() error { return s.cch.Cancel(s.tag, false /* wait for cancel-ok */) }); err != nil {
			s.log.Debug("cancel consumer", "err", err)
			// The channel goes (or its connection was dropped): the delivery
			// tags die with it and the broker redelivers; copies sent now
			// would be duplicates.
			s.consumeLost.Store(true)
			_ = s.cch.Close() // closes deliveries; the broker requeues
		}
	}
	<-dispatched
	close(work)
	workers.Wait() // every sent copy settled: the publish channel can go
	pub.close()
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
// acker first. Once the session is stopping, what arrives is given back
// unstarted (nack, requeue) until amqp091-go closes the channel.
func (s *session) dispatch(work chan<- amqp.Delivery) {
	for d := range s.deliveries {
		s.acker.deliver(d.DeliveryTag)
		select {
		case <-s.stopping:
			s.giveBackUnstarted(d)
			continue
		default:
		}
		select {
		case work <- d:
		case <-s.stopping:
			s.giveBackUnstarted(d)
		}
	}
}

func (s *session) giveBackUnstarted(d amqp.Delivery) {
	s.acker.requeue(d.DeliveryTag)
	s.o.Metrics.outcome(OutcomeLabelRequeued)
	s.settled(Result{MessageID: broker.FromDelivery(d).ID(), Attempt: int(RetriesDone(d.Headers)) + 1, Outcome: OutcomeLabelRequeued})
}

func (s *session) settled(r Result) {
	if s.o.OnSettled != nil {
		s.o.OnSettled(r)
	}
}

// errConsumeLost is the Result.Err of a message whose consume channel went
// away while it was handled: the broker redelivers it.
var errConsumeLost = errors.New("consume channel lost; the broker redelivers the message")
