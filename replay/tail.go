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
	// ErrTailLost: the tail's connection (its taps with it) was lost.
	ErrTailLost = errors.New("the tail's connection was lost: arrivals from then on are not seen")
)

// Tail follows what enters the parking lots until ctx ends, through taps
// (broker.OpenTap) on a connection of its own: the lots themselves are
// never consumed, reordered or counted a delivery. A lost connection ends
// it with an error; ctx ending is no error.
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
	conn, err := broker.Dial(ctx, s.dialOptions("tail"))
	if err != nil {
		return res, err
	}
	defer func() { _ = conn.Close() }() // the taps go with it
	ch, err := conn.Channel()
	if err != nil {
		return res, broker.Explain(err)
	}
	var setup TailSetup
	for _, lot := range lots {
		bs, err := m.QueueBindings(ctx, lot)
		if err != nil {
			setup.Untapped = append(setup.Untapped, UntappedQueue{lot, err})
			continue
		}
		t, err := broker.OpenTap(ch, lot, bs, maxLen)
		if errors.Is(err, broker.ErrUntappable) {
			setup.Untapped = append(setup.Untapped, UntappedQueue{lot, err})
			continue
		}
		if err != nil {
			return res, err
		}
		setup.Tapped = append(setup.Tapped, *t)
	}
	if o.OnTapped != nil {
		o.OnTapped(setup)
	}
	if len(setup.Tapped) == 0 {
		return res, fmt.Errorf("%w (%d named or found, none fed by an exchange a copy can be bound to)", ErrNothingToTail, len(lots))
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
			return res, nil
		case <-closed:
			if ctx.Err() != nil {
				return res, nil
			}
			return res, ErrTailLost
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
