//go:build integration

package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker/brokertest"
	"github.com/parkinglot/parkinglot/ui/cli/clitest"
)

// TestPublishIsConfirmedPersistentAndMandatory: `publish` puts a message
// in the queue bound for its exchange and key, persistent, with the body
// (from --body or stdin), content type, headers and id given; through the
// default exchange to a queue by name; and a message no queue is bound to
// take exits 1 saying it is unroutable, leaving nothing anywhere. A binary
// body published from a file comes back from `show --raw` byte for byte.
func TestPublishIsConfirmedPersistentAndMandatory(t *testing.T) {
	ch := brokertest.Channel(t)
	ex, q := brokertest.Name(t, "ex"), brokertest.Name(t, "queue")
	brokertest.DeclareQueue(t, ch, q, nil)
	if err := ch.ExchangeDeclare(ex, amqp.ExchangeDirect, false, true, false, false, nil); err != nil {
		t.Fatal(err)
	}
	if err := ch.QueueBind(q, "pay", ex, false, nil); err != nil {
		t.Fatal(err)
	}
	cl := clitest.NewCLI(t)
	r := cl.Run("", "publish", ex, "pay", "--body", `{"order": 4711}`, "--header", "tenant=acme", "--id", "o-4711")
	if r.Code != 0 || !strings.Contains(r.Stdout, "published 1 message(s)") {
		t.Fatalf("publish: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	r = cl.Run("plain words", "publish", "", q, "--file", "-", "--id", "t-1")
	if r.Code != 0 {
		t.Fatalf("publish through the default exchange: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	got := brokertest.Drain(t, ch, q)
	if len(got) != 2 {
		t.Fatalf("%d messages in %s, want 2", len(got), q)
	}
	m := got[0]
	if m.MessageId != "o-4711" || string(m.Body) != `{"order": 4711}` || m.ContentType != "application/json" || m.DeliveryMode != amqp.Persistent || m.Headers["tenant"] != "acme" {
		t.Errorf("first message: id %q body %q type %q mode %d headers %v", m.MessageId, m.Body, m.ContentType, m.DeliveryMode, m.Headers)
	}
	if m := got[1]; m.MessageId != "t-1" || string(m.Body) != "plain words" || m.ContentType != "text/plain" || m.DeliveryMode != amqp.Persistent {
		t.Errorf("second message: id %q body %q type %q mode %d", m.MessageId, m.Body, m.ContentType, m.DeliveryMode)
	}

	// A binary body round trip: published from a file, read back by
	// `show --raw` byte for byte.
	bin := []byte{0x1f, 0x8b, 0x08, 0x00, 0xff, 0xfe, 0x00, '\n', 0x1b}
	path := filepath.Join(t.TempDir(), "body.gz")
	if err := os.WriteFile(path, bin, 0o600); err != nil {
		t.Fatal(err)
	}
	if r := cl.Run("", "publish", "", q, "--file", path, "--id", "gz-1", "--content-type", "application/gzip"); r.Code != 0 {
		t.Fatalf("publish --file: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	if r := cl.Run("", "show", q, "gz-1", "--raw"); r.Code != 0 || r.Stdout != string(bin) {
		t.Errorf("show --raw: exit %d, %q; want the %d bytes published", r.Code, r.Stdout, len(bin))
	}
	brokertest.Drain(t, ch, q)

	r = cl.Run("", "publish", ex, "nowhere", "--body", "{}")
	if r.Code != 1 || !strings.Contains(r.Stderr, "unroutable") || strings.Count(strings.TrimSpace(r.Stderr), "\n") > 0 {
		t.Errorf("unroutable: exit %d, stderr %q; want 1 and one line saying so", r.Code, r.Stderr)
	}
	// Confirmed before the command ended: had it been routed, it would
	// be there now.
	if n := brokertest.Depth(t, ch, q); n != 0 {
		t.Errorf("the unroutable message reached %s (%d there)", q, n)
	}
}
