//go:build integration

package replay_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker/brokertest"
	"github.com/parkinglot/parkinglot/replay"
	"github.com/parkinglot/parkinglot/retrycore"
)

func testConnection() replay.Connection {
	return replay.Connection{URL: brokertest.URL(), ManagementURL: brokertest.ManagementURL(), Vhost: "/"}
}

// openSession opens a session with a private audit log.
func openSession(t testing.TB, cfg replay.Config) (*replay.Session, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	name := brokertest.Name(t, "")
	s, err := replay.Open(ctx, testConnection(), cfg, name, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatalf("open session: %v", err)
	}
	s.AuditPath = filepath.Join(t.TempDir(), "audit.jsonl")
	t.Cleanup(func() { _ = s.Close() })
	return s, name
}

func testCtx(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// getOne polls a queue until a message is there (a TTL queue dead-letters
// it back after its TTL) and acks it.
func getOne(t testing.TB, ch *amqp.Channel, queue string) amqp.Delivery {
	t.Helper()
	var d amqp.Delivery
	brokertest.Eventually(t, 15*time.Second, 10*time.Millisecond, func() bool {
		var ok bool
		var err error
		if d, ok, err = ch.Get(queue, false); err != nil {
			t.Fatalf("get from %s: %v", queue, err)
		}
		return ok
	}, func() string { return "no message arrived in " + queue })
	if err := d.Ack(false); err != nil {
		t.Fatalf("ack: %v", err)
	}
	return d
}

// republish publishes a delivery again with new headers, keeping its
// properties (what the seed's consumer does).
func republish(t testing.TB, ch *amqp.Channel, exchange, key string, d amqp.Delivery, headers amqp.Table) {
	t.Helper()
	brokertest.Publish(t, ch, exchange, key, amqp.Publishing{
		Headers: headers, ContentType: d.ContentType, DeliveryMode: d.DeliveryMode,
		MessageId: d.MessageId, Timestamp: d.Timestamp, Body: d.Body,
	})
}

func copyTable(t amqp.Table) amqp.Table {
	out := amqp.Table{}
	for k, v := range t {
		out[k] = v
	}
	return out
}

// seed1 is the seed's topology: main, retry (one TTL delay queue that
// dead-letters back to main) and error tiers, all named for this test.
type seed1 struct {
	mainEx, retryEx, errorEx string
	mainQ, delayQ, parking   string
	mainKey, retryKey        string
}

func declareSeed1(t testing.TB, ch *amqp.Channel) seed1 {
	t.Helper()
	s := seed1{
		mainEx: brokertest.Name(t, "main.exchange"), retryEx: brokertest.Name(t, "retry.exchange"), errorEx: brokertest.Name(t, "error.exchange"),
		mainQ: brokertest.Name(t, "payment.main.queue"), delayQ: brokertest.Name(t, "payment.retry.15s"), parking: brokertest.Name(t, "payment.error.dlq"),
		mainKey: "payment.execute", retryKey: "payment.retry",
	}
	for _, ex := range []string{s.mainEx, s.retryEx, s.errorEx} {
		brokertest.DeclareExchange(t, ch, ex, "direct")
	}
	brokertest.DeclareQueue(t, ch, s.mainQ, nil)
	brokertest.DeclareQueue(t, ch, s.delayQ, amqp.Table{
		"x-message-ttl":             int32(30),
		"x-dead-letter-exchange":    s.mainEx,
		"x-dead-letter-routing-key": s.mainKey,
	})
	brokertest.DeclareQueue(t, ch, s.parking, nil)
	bind(t, ch, s.mainQ, s.mainEx, s.mainKey)
	bind(t, ch, s.delayQ, s.retryEx, s.retryKey)
	bind(t, ch, s.parking, s.errorEx, "payment.error")
	return s
}

func bind(t testing.TB, ch *amqp.Channel, queue, exchange, key string) {
	t.Helper()
	if err := ch.QueueBind(queue, key, exchange, false, nil); err != nil {
		t.Fatalf("bind %s to %s/%s: %v", queue, exchange, key, err)
	}
}

// park runs one message through the seed's Go consumer: it fails, is
// republished to the retry exchange with x-retry-count (so x-death names
// only retry.exchange/payment.retry), comes back after the TTL, fails
// again and is republished to the error exchange with x-last-error.
// withOriginal adds x-original-exchange/-routing-key as retrycore does.
func (s seed1) park(t testing.TB, ch *amqp.Channel, id string, body []byte, withOriginal bool) {
	t.Helper()
	brokertest.Publish(t, ch, s.mainEx, s.mainKey, amqp.Publishing{MessageId: id, ContentType: "application/json", DeliveryMode: amqp.Persistent, Body: body, Headers: amqp.Table{"tenant": "acme"}})
	d := getOne(t, ch, s.mainQ)
	h := copyTable(d.Headers)
	h["x-retry-count"] = int32(1)
	h["x-last-error"] = "connection timeout calling bank"
	if withOriginal {
		h["x-original-exchange"] = s.mainEx
		h["x-original-routing-key"] = s.mainKey
	}
	republish(t, ch, s.retryEx, s.retryKey, d, h)
	d = getOne(t, ch, s.mainQ) // back after the delay queue's TTL
	h = copyTable(d.Headers)
	h["x-retry-count"] = int32(3)
	h["x-last-error"] = "connection timeout calling bank"
	h["x-parked-at"] = time.Now().Add(-2 * time.Hour)
	republish(t, ch, s.errorEx, "payment.error", d, h)
}

// drainAll takes every message from a queue, polling until want arrived
// (or the deadline) so that in-flight deliveries are not missed.
func drainAll(t testing.TB, ch *amqp.Channel, queue string, want int) []amqp.Delivery {
	t.Helper()
	var out []amqp.Delivery
	brokertest.Poll(15*time.Second, 20*time.Millisecond, func() bool {
		out = append(out, brokertest.Drain(t, ch, queue)...)
		return len(out) >= want
	})
	return out
}

// assertReplayed checks the transform on a replayed copy (Transform).
func assertReplayed(t testing.TB, d amqp.Delivery, id string, body []byte) {
	t.Helper()
	if d.MessageId != id || !bytes.Equal(d.Body, body) {
		t.Fatalf("replayed copy: id %q body %q; want %q %q", d.MessageId, d.Body, id, body)
	}
	for _, k := range []string{"x-death", "x-first-death-queue", "x-first-death-reason", "x-first-death-exchange", "x-retry-count", "x-delivery-count"} {
		if _, ok := d.Headers[k]; ok {
			t.Errorf("replayed copy still carries %s", k)
		}
	}
	if n, ok := d.Headers["x-replay-count"].(int32); !ok || n != 1 {
		t.Errorf("x-replay-count = %#v, want int32 1", d.Headers["x-replay-count"])
	}
	if _, ok := d.Headers["x-replayed-at"].(time.Time); !ok {
		t.Errorf("x-replayed-at = %#v, want a timestamp", d.Headers["x-replayed-at"])
	}
	if rid, _ := d.Headers["x-replay-id"].(string); len(rid) != 36 {
		t.Errorf("x-replay-id = %#v, want a UUID", d.Headers["x-replay-id"])
	}
	if d.Headers["x-last-error"] == nil {
		t.Errorf("replay dropped x-last-error; other headers must be kept")
	}
}

// auditEntries reads an audit log.
func auditEntries(t testing.TB, path string) []replay.AuditEntry {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("audit log: %v", err)
	}
	defer f.Close()
	fi, _ := f.Stat()
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("audit log mode %v, want 0600", fi.Mode().Perm())
	}
	var out []replay.AuditEntry
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if strings.Contains(sc.Text(), "guest:guest") || strings.Contains(sc.Text(), `"guest@`) {
			t.Errorf("audit entry holds a password: %s", sc.Text())
		}
		var e replay.AuditEntry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("audit line %q: %v", sc.Text(), err)
		}
		out = append(out, e)
	}
	return out
}

func publishN(t testing.TB, ch *amqp.Channel, exchange, key string, n int, mk func(i int) amqp.Publishing) {
	t.Helper()
	msgs := make([]amqp.Publishing, n)
	for i := range msgs {
		msgs[i] = mk(i)
	}
	for start := 0; start < n; start += 1000 {
		brokertest.PublishMany(t, ch, exchange, key, msgs[start:min(start+1000, n)])
	}
}

func dest(ex, rk string) *retrycore.Destination {
	return &retrycore.Destination{Exchange: ex, RoutingKey: rk}
}

func idOf(i int) string { return fmt.Sprintf("m-%05d", i) }
