package brokertest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker"
)

// URL is the AMQP URL of the test broker: $AMQP_URL or guest on 127.0.0.1.
func URL() string {
	if u := os.Getenv("AMQP_URL"); u != "" {
		return u
	}
	return "amqp://guest:guest@127.0.0.1:5672/"
}

// ManagementURL is the management API of the test broker:
// $MANAGEMENT_URL or guest on 127.0.0.1:15672.
func ManagementURL() string {
	if u := os.Getenv("MANAGEMENT_URL"); u != "" {
		return u
	}
	return "http://guest:guest@127.0.0.1:15672"
}

// Name returns a queue/exchange name unique to this test run.
func Name(t testing.TB, suffix string) string {
	t.Helper()
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	base := strings.NewReplacer("/", ".", " ", "_", "#", "", "*", "").Replace(t.Name())
	if len(base) > 80 {
		base = base[len(base)-80:]
	}
	n := "pltest." + base + "." + hex.EncodeToString(b)
	if suffix != "" {
		n += "." + suffix
	}
	return n
}

// Dial connects to the test broker or fails the test, and closes the
// connection when the test ends.
func Dial(t testing.TB, name string) *broker.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if name == "" {
		name = "parkinglot-test " + t.Name()
	}
	c, err := broker.Dial(ctx, broker.Options{URL: URL(), Name: name})
	if err != nil {
		t.Fatalf("the tests need RabbitMQ (run `make broker`): %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// Channel opens a channel on a new test connection.
func Channel(t testing.TB) *amqp.Channel {
	t.Helper()
	ch, err := Dial(t, "").Channel()
	if err != nil {
		t.Fatalf("open channel: %v", err)
	}
	return ch
}

// Management returns a management API client for vhost "/", failing the
// test if the API does not answer.
func Management(t testing.TB) *broker.Management {
	t.Helper()
	m, err := broker.NewManagement(ManagementURL(), "/")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if _, err := m.Overview(ctx); err != nil {
		t.Fatalf("the tests need the management API (run `make broker`): %v", err)
	}
	t.Cleanup(m.Close)
	return m
}

// cleanupChannel opens a fresh connection at clean-up time, so deleting
// works even when the test broke its own channels.
func cleanupChannel(t testing.TB, do func(ch *amqp.Channel)) {
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		// broker.Dial: URL() may list the nodes of a cluster.
		c, err := broker.Dial(ctx, broker.Options{URL: URL(), Name: "parkinglot-test clean-up"})
		if err != nil {
			t.Logf("clean-up: %v", err)
			return
		}
		defer c.Close()
		ch, err := c.Channel()
		if err != nil {
			t.Logf("clean-up: %v", err)
			return
		}
		do(ch)
	})
}

// DeclareQueue declares a durable queue and deletes it when the test ends.
func DeclareQueue(t testing.TB, ch *amqp.Channel, name string, args amqp.Table) {
	t.Helper()
	if _, err := ch.QueueDeclare(name, true, false, false, false, args); err != nil {
		t.Fatalf("declare queue %s: %v", name, err)
	}
	DeleteQueueAtEnd(t, name)
}

// DeleteQueueAtEnd deletes a queue (declared by the code under test) when
// the test ends.
func DeleteQueueAtEnd(t testing.TB, name string) {
	cleanupChannel(t, func(ch *amqp.Channel) { _, _ = ch.QueueDelete(name, false, false, false) })
}

// DeclareExchange declares a durable exchange and deletes it at the end.
func DeclareExchange(t testing.TB, ch *amqp.Channel, name, kind string) {
	t.Helper()
	if err := ch.ExchangeDeclare(name, kind, true, false, false, false, nil); err != nil {
		t.Fatalf("declare exchange %s: %v", name, err)
	}
	DeleteExchangeAtEnd(t, name)
}

// DeleteExchangeAtEnd deletes an exchange when the test ends.
func DeleteExchangeAtEnd(t testing.TB, name string) {
	cleanupChannel(t, func(ch *amqp.Channel) { _ = ch.ExchangeDelete(name, false, false) })
}

// Publish publishes one message with confirms and mandatory, failing the
// test unless the broker confirmed a routed copy.
func Publish(t testing.TB, ch *amqp.Channel, exchange, key string, msg amqp.Publishing) {
	t.Helper()
	PublishMany(t, ch, exchange, key, []amqp.Publishing{msg})
}

// PublishMany publishes messages with confirms and mandatory, failing the
// test unless every one was confirmed and routed.
func PublishMany(t testing.TB, ch *amqp.Channel, exchange, key string, msgs []amqp.Publishing) {
	t.Helper()
	if err := ch.Confirm(false); err != nil {
		t.Fatalf("confirm mode: %v", err)
	}
	returns := ch.NotifyReturn(make(chan amqp.Return, len(msgs)+1))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	pending := make([]*amqp.DeferredConfirmation, 0, len(msgs))
	for _, m := range msgs {
		dc, err := ch.PublishWithDeferredConfirmWithContext(ctx, exchange, key, true, false, m)
		if err != nil {
			t.Fatalf("publish to %s/%s: %v", exchange, key, err)
		}
		pending = append(pending, dc)
	}
	for _, dc := range pending {
		ok, err := dc.WaitContext(ctx)
		if err != nil || !ok {
			t.Fatalf("publish to %s/%s not confirmed (ok=%v): %v", exchange, key, ok, err)
		}
	}
	select {
	case r := <-returns:
		t.Fatalf("publish to %s/%s returned unroutable: %s", exchange, key, r.ReplyText)
	default:
	}
}

// Depth returns the number of ready messages in a queue.
func Depth(t testing.TB, ch *amqp.Channel, queue string) int {
	t.Helper()
	q, err := ch.QueueDeclarePassive(queue, true, false, false, false, nil)
	if err != nil {
		t.Fatalf("inspect queue %s: %v", queue, err)
	}
	return q.Messages
}

// Drain gets every ready message from a queue (acking them) and returns them.
func Drain(t testing.TB, ch *amqp.Channel, queue string) []amqp.Delivery {
	t.Helper()
	var out []amqp.Delivery
	for {
		d, ok, err := ch.Get(queue, false)
		if err != nil {
			t.Fatalf("get from %s: %v", queue, err)
		}
		if !ok {
			return out
		}
		if err := d.Ack(false); err != nil {
			t.Fatalf("ack: %v", err)
		}
		out = append(out, d)
	}
}

// CloseConnections force-closes, through the management API, every
// connection whose client-side connection_name has the given prefix, and
// returns how many it closed.
func CloseConnections(t testing.TB, m *broker.Management, namePrefix string) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	conns, err := m.Connections(ctx)
	if err != nil {
		t.Fatalf("list connections: %v", err)
	}
	n := 0
	for _, c := range conns {
		if strings.HasPrefix(c.ClientName(), namePrefix) {
			if err := m.CloseConnection(ctx, c.Name); err == nil {
				n++
			}
		}
	}
	return n
}

// GetWithin polls basic.get on queue until a message is there (returned
// unacked, ok) or timeout passes (ok false): a message given back, expired
// or dead-lettered arrives soon after, not at once.
func GetWithin(t testing.TB, ch *amqp.Channel, queue string, timeout time.Duration) (amqp.Delivery, bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		d, ok, err := ch.Get(queue, false)
		if err != nil {
			t.Fatalf("get %s: %v", queue, err)
		}
		if ok || time.Now().After(deadline) {
			return d, ok
		}
		time.Sleep(20 * time.Millisecond) // polling basic.get with a deadline
	}
}

// MustGet is GetWithin that fails the test when nothing arrives in 15 s.
func MustGet(t testing.TB, ch *amqp.Channel, queue string) amqp.Delivery {
	t.Helper()
	d, ok := GetWithin(t, ch, queue, 15*time.Second)
	if !ok {
		t.Fatalf("no message in %s within 15s", queue)
	}
	return d
}

// RawDial opens a plain amqp091-go connection to the test broker (named, so
// an operator can tell benchmark connections apart) and closes it when the
// benchmark ends.
func RawDial(tb testing.TB, name string) *amqp.Connection {
	tb.Helper()
	props := amqp.NewConnectionProperties()
	props.SetClientConnectionName("parkinglot-bench " + name)
	// A cluster's URL is a comma list (README, Clusters): the first node
	// that answers.
	var c *amqp.Connection
	var err error
	for _, u := range strings.Split(URL(), ",") {
		if c, err = amqp.DialConfig(u, amqp.Config{Properties: props, Heartbeat: 10 * time.Second}); err == nil {
			break
		}
	}
	if err != nil {
		tb.Fatalf("the benchmarks need RabbitMQ (run `make broker`): %v", err)
	}
	tb.Cleanup(func() { _ = c.Close() })
	return c
}

// WaitDepth waits until queue holds want ready messages (given-back
// messages are ready again soon after the nack, not at once), failing the
// benchmark after timeout.
func WaitDepth(tb testing.TB, queue string, want int, timeout time.Duration) {
	tb.Helper()
	conn := RawDial(tb, "depth "+tb.Name())
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		tb.Fatalf("open channel: %v", err)
	}
	deadline := time.Now().Add(timeout)
	for {
		q, err := ch.QueueDeclarePassive(queue, true, false, false, false, nil)
		if err != nil {
			tb.Fatalf("inspect %s: %v", queue, err)
		}
		if q.Messages == want {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("queue %s: %d ready, want %d", queue, q.Messages, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Purge empties a queue.
func Purge(tb testing.TB, ch *amqp.Channel, queue string) {
	tb.Helper()
	if _, err := ch.QueuePurge(queue, false); err != nil {
		tb.Fatalf("purge %s: %v", queue, err)
	}
}
