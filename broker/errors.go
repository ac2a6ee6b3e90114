package broker

import (
	"errors"
	"strings"

	amqp "github.com/rabbitmq/amqp091-go"
)

// Sentinel errors that callers decide on (errors.Is). Broker errors carry
// them through Explain.
var (
	ErrNotFound           = errors.New("not found")
	ErrAccessRefused      = errors.New("access refused")
	ErrPreconditionFailed = errors.New("precondition failed")
	ErrResourceLocked     = errors.New("resource locked")
	// ErrQueueDown: the queue exists but the node that holds it is down
	// (a classic queue's home node). Not ErrNotFound: nothing is gone, its
	// messages come back with the node.
	ErrQueueDown = errors.New("queue's node is down")
	// ErrNacked: the broker refused a published copy with basic.nack (a
	// full queue with x-overflow reject-publish, a quorum queue without
	// its majority). The daemon and the replay both leave the original
	// where it was.
	ErrNacked = errors.New("the broker refused the copy (nack)")
	// ErrConsumerCancelled: the broker cancelled a browse's consumer while
	// the connection stayed up: the queue was deleted, its node went down,
	// or (quorum, 4.x) its x-consumer-timeout passed. Not a lost
	// connection, and not "held messages return": a deleted queue's
	// messages are gone with it.
	ErrConsumerCancelled = errors.New("the broker cancelled the browse's consumer (the queue deleted, its node down, or a consumer timeout)")
	// ErrOthersConsume: a read that must not run beside another consumer
	// (a pass with PassOptions.Alone, a head read) found one and took
	// nothing.
	ErrOthersConsume = errors.New("the queue has consumers")
)

// Error is a channel or connection error from the broker, reworded for people.
type Error struct {
	Code   int
	Reason string // the broker's text without its "NOT_FOUND - " prefix
	kind   error
}

func (e *Error) Error() string { return e.Reason }

// Unwrap lets errors.Is match the sentinel for the AMQP reply code.
func (e *Error) Unwrap() error { return e.kind }

// Explain maps an amqp091-go error to *Error (with a sentinel to match), so
// messages read "no queue 'x' in vhost '/'" instead of "Exception (404) ...".
// Other errors are returned unchanged.
func Explain(err error) error {
	var ae *amqp.Error
	if err == nil || !errors.As(err, &ae) {
		return err
	}
	reason := ae.Reason
	if i := strings.Index(reason, " - "); i > 0 && strings.ToUpper(reason[:i]) == reason[:i] {
		reason = reason[i+3:]
	}
	e := &Error{Code: ae.Code, Reason: RedactText(reason)}
	switch ae.Code {
	case amqp.NotFound:
		e.kind = ErrNotFound
		// A classic queue on a stopped node: RabbitMQ 3.x answers 404 "home
		// node '…' of durable queue '…' in vhost '…' is down or
		// inaccessible"; 4.3.6 (measured) "queue '…' in vhost '…' process
		// is stopped by supervisor".
		if strings.Contains(reason, "is down or inaccessible") || strings.Contains(reason, "process is stopped by supervisor") {
			e.kind = ErrQueueDown
		}
	case amqp.AccessRefused:
		e.kind = ErrAccessRefused
	case amqp.PreconditionFailed:
		e.kind = ErrPreconditionFailed
	case amqp.ResourceLocked:
		e.kind = ErrResourceLocked
	}
	if e.kind == nil && ae == amqp.ErrClosed {
		e.Reason = "connection or channel closed"
	}
	return e
}

// ReadyCount is a queue's ready messages, by a passive declare on ch (the
// broker's own count, without the management API's statistics delay).
func ReadyCount(ch *amqp.Channel, queue string) (int, error) {
	ready, _, err := QueueCounts(ch, queue)
	return ready, err
}

// QueueCounts is ReadyCount with the queue's consumers, as the queue
// counts them now (the management API's count lags by its statistics
// interval).
func QueueCounts(ch *amqp.Channel, queue string) (ready, consumers int, err error) {
	q, err := ch.QueueDeclarePassive(queue,
		false, // durable (ignored when passive)
		false, // autoDelete
		false, // exclusive
		false, // noWait
		nil)
	if err != nil {
		return 0, 0, Explain(err)
	}
	return q.Messages, q.Consumers, nil
}
