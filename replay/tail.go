package replay

import (
	"context"
	"errors"
	"fmt"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/retrycore"
)

// TailOptions say which parking lots Tail follows and what it hands on.
type TailOptions struct {
	// Queues are the parking lots; none: every parking lot of the vhost
	// (Queues' rows marked ParkingLot).
	Queues []string
	Filter string // a --filter expression; "" every arrival
	// MaxBuffered bounds what each tap holds unread (0: DefaultTapLength);
	// past it the oldest are dropped and counted.
	MaxBuffered int
	// OnTapped is told, once every tap is open, how each lot is followed
	// (Tapped) or why it cannot be (Untapped).
	OnTapped func(TailSetup)
	// OnArrival sees each arrival that matches the filter, in order per
	// lot; OnDropped each copy a tap dropped.
	OnArrival func(TailArrival)
	OnDropped func(queue string)
	// OnRetapped is told, after a lost connection, that the tail re-dialled
	// and tapped its lots again: what arrived in the gap was not seen.
	OnRetapped func(TailGap)
}

// TailGap is a time the tail saw nothing: from the lost connection (Err)
// until its lots were tapped again.
type TailGap struct {
	Lost, Retapped time.Time
	Err            error
}

// DefaultTapLength is what a tap holds unread by default.
const DefaultTapLength = 10_000

// TailSetup is how each parking lot is followed.
type TailSetup struct {
	Tapped   []broker.Tap    // with the bindings each copied
	Untapped []UntappedQueue // lots no copy of whose arrivals can be bound
}

// UntappedQueue is a parking lot Tail cannot follow, and why (an error
// wrapping broker.ErrUntappable or another).
type UntappedQueue struct {
	Queue string
	Err   error
}

// TailArrival is one message that entered a parking lot.
type TailArrival struct {
	Queue   string
	At      time.Time
	Message broker.Message
	Summary Summary
}

// TailResult is what a tail saw until it ended.
type TailResult struct {
	Arrived int            `json:"arrived"` // matching the filter
	Dropped int            `json:"dropped"` // dropped by a full tap, unseen
	ByGroup map[string]int `json:"by_group"`
}

// Tail's errors.
var (
	// ErrNothingToTail: no parking lot named (or found) can be followed.
	ErrNothingToTail = errors.New("no parking lot can be tailed")
	// ErrTailLost: the tail's connection (its taps with it) was lost and
	// no broker could be dialled again.
	ErrTailLost = errors.New("the tail's connection was lost: arrivals from then on are not seen")
)

// Tail follows what enters the parking lots until ctx ends, through taps
// (broker.OpenTap) on a connection of its own: the lots themselves are
// never consumed, reordered or counted a delivery. A lost connection is
// re-dialled (another node of a cluster, where the lost one went) and the
// lots tapped again, the gap told (OnRetapped); ctx ending is no error.
func (s *Session) Tail(ctx context.Context, o TailOptions) (TailResult, error) {
	res := TailResult{ByGroup: map[string]int{}}
	f, err := CompileFilter(o.Filter)
	if err != nil {
		return res, err
	}
	f = f.readingBodies(s.Bodies)
	m, err := s.Management(ctx)
	if err != nil {
		return res, fmt.Errorf("tail reads which exchanges feed a parking lot from the management API: %w", err)
	}
	lots := o.Queues
	if len(lots) == 0 {
		rows, err := s.Queues(ctx)
		if err != nil {
			return res, err
		}
		for _, r := range rows {
			if r.ParkingLot {
				lots = append(lots, r.Name)
			}
		}
	}
	maxLen := o.MaxBuffered
	if maxLen <= 0 {
		maxLen = DefaultTapLength
	}
	t := tail{s: s, o: o, f: f, m: m, lots: lots, maxLen: maxLen, res: &res}
	var gap *TailGap
	for {
		conn, err := t.dial(ctx, gap != nil)
		if err != nil {
			if ctx.Err() != nil {
				return res, nil
			}
			if gap != nil {
				return res, fmt.Errorf("%w: %w", ErrTailLost, err)
			}
			return res, err
		}
		lostErr, err := t.follow(ctx, conn, gap)
		_ = conn.Close() // the taps go with it
		if err != nil || lostErr == nil {
			return res, err
		}
		gap = &TailGap{Lost: time.Now(), Err: lostErr}
	}
}

// tail is one Tail's state across its connections.
type tail struct {
	s      *Session
	o      TailOptions
	f      *Filter
	m      *broker.Management
	lots   []string
	maxLen int
	res    *TailResult
}

// dial reaches the broker: once, or after a loss again and again (the next
// node first) until ctx ends or the error is for good.
func (t *tail) dial(ctx context.Context, again bool) (*broker.Conn, error) {
	if !again {
		return broker.Dial(ctx, t.s.dialOptions("tail"))
	}
	return broker.Redial(ctx, t.s.dialOptions("tail"), broker.Backoff{Initial: 100 * time.Millisecond, Max: 5 * time.Second})
}

// follow taps the lots on conn and hands on what arrives until ctx ends
// (nil, nil) or the connection is lost (its error, nil). gap, when set, is
// the loss before this connection: told once the lots are tapped again.
func (t *tail) follow(ctx context.Context, conn *broker.Conn, gap *TailGap) (lost error, err error) {
	o, f, res := t.o, t.f, t.res
	ch, err := conn.Channel()
	if err != nil {
		return nil, broker.Explain(err)
	}
	var setup TailSetup
	for _, lot := range t.lots {
		bs, err := t.m.QueueBindings(ctx, lot)
		if err != nil {
			setup.Untapped = append(setup.Untapped, UntappedQueue{lot, err})
			continue
		}
		tp, err := broker.OpenTap(ch, lot, bs, t.maxLen)
		if errors.Is(err, broker.ErrUntappable) {
			setup.Untapped = append(setup.Untapped, UntappedQueue{lot, err})
			continue
		}
		if err != nil {
			if gap != nil && ch.IsClosed() {
				return err, nil // lost again while tapping
			}
			return nil, err
		}
		setup.Tapped = append(setup.Tapped, *tp)
	}
	switch {
	case gap == nil && o.OnTapped != nil:
		o.OnTapped(setup)
	case gap != nil && o.OnRetapped != nil:
		gap.Retapped = time.Now()
		o.OnRetapped(*gap)
	}
	if len(setup.Tapped) == 0 && gap != nil {
		// Tapped before the loss: not a usage mistake, a tail that cannot
		// go on.
		return nil, fmt.Errorf("%w: no parking lot could be tapped again (%s: %w)", ErrTailLost, setup.Untapped[0].Queue, setup.Untapped[0].Err)
	}
	if len(setup.Tapped) == 0 {
		return nil, fmt.Errorf("%w (%d named or found, none fed by an exchange a copy can be bound to)", ErrNothingToTail, len(t.lots))
	}
	closed := ch.NotifyClose(make(chan *amqp.Error, 1))
	// One stream of every tap's copies and drops, in order per tap.
	type tapped struct {
		tap     int
		d       amqp.Delivery
		dropped bool
	}
	events, done := make(chan tapped), make(chan struct{})
	defer close(done)
	forward := func(i int, from <-chan amqp.Delivery, dropped bool) {
		for d := range from {
			select {
			case events <- tapped{i, d, dropped}:
			case <-done:
				return
			}
		}
	}
	for i, t := range setup.Tapped {
		go forward(i, t.Deliveries, false)
		go forward(i, t.Dropped, true)
	}
	for {
		var e tapped
		select {
		case <-ctx.Done():
			return nil, nil
		case cerr := <-closed:
			if ctx.Err() != nil {
				return nil, nil
			}
			if cerr == nil {
				return errors.New("channel closed"), nil
			}
			return cerr, nil
		case e = <-events:
		}
		lot := setup.Tapped[e.tap].Queue
		if e.dropped {
			res.Dropped++
			if o.OnDropped != nil {
				o.OnDropped(lot)
			}
			continue
		}
		msg := broker.FromDelivery(e.d)
		sum := Summarize(ctx, msg, retrycore.OriginQuery{ParkingLot: lot})
		now := time.Now()
		if ok, _ := f.Match(msg, sum, lot, now); !ok {
			continue
		}
		res.Arrived++
		res.ByGroup[sum.Group]++
		if o.OnArrival != nil {
			o.OnArrival(TailArrival{Queue: lot, At: now, Message: msg, Summary: sum})
		}
	}
}
