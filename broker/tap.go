package broker

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"

	amqp "github.com/rabbitmq/amqp091-go"
)

// QueueBindings lists the bindings whose destination is queue, the
// default exchange's (source "") included.
func (m *Management) QueueBindings(ctx context.Context, queue string) ([]Binding, error) {
	var bs []Binding
	err := m.do(ctx, http.MethodGet, m.vpath("queues", queue)+"/bindings", nil, &bs)
	return bs, err
}

// ErrUntappable: nothing but the default exchange routes to the queue (a
// dead-letter routing key naming it, a publish to it by name), and a copy
// of what the default exchange routes to a queue cannot be bound.
var ErrUntappable = errors.New("only the default exchange routes to the queue")

// TapPrefix starts the name of every tap queue (Tap), so a person (and a
// test) can tell them from the user's queues.
const TapPrefix = "parkinglot.tap."

// Tap receives a copy of what enters a queue, without touching it: a
// queue of its own, exclusive (gone with the connection, however it
// ends), bound like the queue to every exchange that routes to it, and
// bounded (MaxLength, the oldest dropped first; Dropped counts them).
type Tap struct {
	Queue    string    // the queue tapped
	Name     string    // the tap's own queue
	Bindings []Binding // the bindings copied
	// Deliveries are the copies, acknowledged as they are delivered.
	Deliveries <-chan amqp.Delivery
	// Dropped receives one value per copy the tap dropped because it
	// held MaxLength unread.
	Dropped <-chan amqp.Delivery
}

// OpenTap taps queue on ch with the bindings bs (QueueBindings): it
// copies each whose source is an exchange; the default exchange's cannot
// be copied, and a queue with no other is ErrUntappable. maxLength bounds
// what the tap holds unread.
func OpenTap(ch *amqp.Channel, queue string, bs []Binding, maxLength int) (*Tap, error) {
	var copies []Binding
	for _, b := range bs {
		if b.Source != "" && b.DestinationType != "exchange" {
			copies = append(copies, b)
		}
	}
	if len(copies) == 0 {
		return nil, fmt.Errorf("%w %q", ErrUntappable, queue)
	}
	suffix := make([]byte, 4)
	_, _ = rand.Read(suffix)
	name := TapPrefix + hex.EncodeToString(suffix) + "." + queue
	if len(name) > 255 {
		name = name[:255]
	}
	dropped := name + ".dropped"
	if len(dropped) > 255 {
		dropped = TapPrefix + hex.EncodeToString(suffix) + ".dropped"
	}
	// exclusive and auto-delete: no tap outlives its connection.
	if _, err := ch.QueueDeclare(dropped, false, true, true, false, amqp.Table{"x-max-length": int64(maxLength)}); err != nil {
		return nil, fmt.Errorf("declare the tap of %q: %w", queue, Explain(err))
	}
	args := amqp.Table{"x-max-length": int64(maxLength), "x-overflow": "drop-head",
		"x-dead-letter-exchange": "", "x-dead-letter-routing-key": dropped}
	if _, err := ch.QueueDeclare(name, false, true, true, false, args); err != nil {
		return nil, fmt.Errorf("declare the tap of %q: %w", queue, Explain(err))
	}
	for _, b := range copies {
		if err := ch.QueueBind(name, b.RoutingKey, b.Source, false, b.Arguments); err != nil {
			return nil, fmt.Errorf("bind the tap of %q to %q: %w", queue, b.Source, Explain(err))
		}
	}
	deliveries, err := ch.Consume(name, "", true, true, false, false, nil)
	if err != nil {
		return nil, fmt.Errorf("consume the tap of %q: %w", queue, Explain(err))
	}
	drops, err := ch.Consume(dropped, "", true, true, false, false, nil)
	if err != nil {
		return nil, fmt.Errorf("consume the tap of %q: %w", queue, Explain(err))
	}
	return &Tap{Queue: queue, Name: name, Bindings: copies, Deliveries: deliveries, Dropped: drops}, nil
}
