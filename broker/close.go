package broker

import (
	"errors"
	"fmt"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// CloseWait bounds how long a close (or a consumer's cancel) waits for the
// broker's answer. A node whose quorum queues lost their majority never
// answers the close of a channel holding unconfirmed publishes, nor the
// cancel of a consumer of such a queue (measured on the 4.3.6 cluster: a
// replay waited on each for minutes). Dropping the
// connection instead loses nothing: the broker gives back every message
// the connection held, as after any lost connection.
const CloseWait = 10 * time.Second

// ErrCloseUnanswered: the broker did not answer a close within CloseWait and
// the connection was dropped.
var ErrCloseUnanswered = errors.New("the broker did not answer the close in time; the connection was dropped (the broker gives back what it held; removals it had not applied come back as duplicates)")

// Close closes the connection, waiting at most CloseWait for the broker.
// It shadows amqp.Connection.Close, which waits for as long as it takes.
func (c *Conn) Close() error {
	return c.Bounded("close connection", CloseWait, c.Connection.Close)
}

// CloseChannel closes ch, a channel of c, waiting at most CloseWait for the
// broker (see Bounded).
func (c *Conn) CloseChannel(ch *amqp.Channel) error {
	return c.Bounded("close channel", CloseWait, ch.Close)
}

// Bounded makes call, a synchronous method on c or one of its channels (a
// close, a consumer's cancel), waiting at most wait for the broker's
// answer. When none comes it drops the connection — closes its socket,
// which ends the call — and says so with ErrCloseUnanswered.
func (c *Conn) Bounded(what string, wait time.Duration, call func() error) error {
	done := make(chan error, 1)
	go func() { done <- call() }()
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case err := <-done:
		return err
	case <-t.C:
	}
	c.drop()
	t.Reset(CloseWait) // the reader's shutdown ends the call at once; bounded all the same
	select {
	case <-done:
	case <-t.C:
	}
	return fmt.Errorf("%s on %s: %w", what, c.URL, ErrCloseUnanswered)
}

// Drop closes the connection's socket at once, with no close handshake:
// for a broker that stopped answering, whose answer to a close would only
// be waited for in vain. The broker gives back every message the
// connection held, as after any lost connection.
func (c *Conn) Drop() { c.drop() }

// drop closes the connection's socket: amqp091-go's reader fails, shuts
// the connection and its channels down, and every pending call returns.
func (c *Conn) drop() {
	if c.sock != nil {
		_ = c.sock.Close()
		return
	}
	_ = c.CloseDeadline(time.Now()) // a Conn not made by Dial
}
