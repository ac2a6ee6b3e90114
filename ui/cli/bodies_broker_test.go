//go:build integration

package cli_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/broker/brokertest"
	"github.com/parkinglot/parkinglot/ui/cli/clitest"
)

// TestRecordedBodiesReadFilteredAndReplayedRaw: the bodies kombu
// (MessagePack, zlib under its compression header) and pika (gzip JSON,
// protobuf with a field newer than the schema, Avro in the Confluent wire
// format) wrote, rejected into a parking lot by a consumer, are shown
// decoded with the schemas of the config's decode, found by a plain
// search and a filter on a decoded field, and replayed as the bytes they
// were, properties and headers with them.
func TestRecordedBodiesReadFilteredAndReplayedRaw(t *testing.T) {
	ch := brokertest.Channel(t)
	lot, sink := brokertest.Name(t, "lot"), brokertest.Name(t, "sink")
	brokertest.DeclareQueue(t, ch, lot, nil)
	brokertest.DeclareQueue(t, ch, sink, nil)
	scenarios := []string{"kombu-msgpack-zlib", "pika-gzip-json", "pika-protobuf", "pika-avro-confluent"}
	recorded := map[string]broker.Message{}
	var msgs []amqp.Publishing
	for _, scenario := range scenarios {
		recorded[scenario] = brokertest.Recording(t, scenario)
		msgs = append(msgs, brokertest.Producing(recorded[scenario], scenario))
	}
	brokertest.ParkByReject(t, ch, lot, msgs...)

	schemas, err := filepath.Abs(filepath.Join("..", "..", "testdata", "frameworks", "schemas"))
	if err != nil {
		t.Fatal(err)
	}
	config := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(config, []byte("decode:\n  proto_path: ["+schemas+"]\n  proto: ["+filepath.Join(schemas, "shop.proto")+
		"]\n  avro_schema: ["+filepath.Join(schemas, "payment.avsc")+"]\n  confluent_ids: {7: payment.avsc}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c := clitest.NewCLI(t)
	for scenario, wants := range map[string][]string{
		"kombu-msgpack-zlib":  {"MessagePack (content_type application/x-msgpack), shown as JSON", "zlib-compressed (compression)", `"order_id": "4711"`},
		"pika-protobuf":       {"protobuf shop.Order (content_type ", "5 bytes of fields shop.Order does not name", `"order_id": "4711"`, `"status": "STATUS_REFUSED"`, `"@type": "type.googleapis.com/shop.Invoice"`},
		"pika-avro-confluent": {"Avro shop.Payment (Confluent schema id 7), shown as JSON", `"payment_id": "PAY-1"`, `"paid_at": "2025-12-06T05:46:40.123Z"`},
	} {
		r := c.Run("", "--config", config, "show", lot, scenario)
		for _, want := range wants {
			if r.Code != 0 || !strings.Contains(r.Stdout, want) {
				t.Errorf("show %s: exit %d, no %q:\n%s%s", scenario, r.Code, want, r.Stdout, r.Stderr)
			}
		}
	}
	// Without the schemas, a protobuf body says why it is bytes.
	if r := c.Run("", "show", lot, "pika-protobuf"); r.Code != 0 || !strings.Contains(r.Stdout, "not valid protobuf") {
		t.Errorf("show pika-protobuf without schemas: exit %d:\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	r := c.Run("", "show", lot, "pika-gzip-json", "-o", "json")
	var shown struct {
		Decoded     map[string]any    `json:"decoded"`
		BodyReading map[string]string `json:"body_reading"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &shown); err != nil || shown.Decoded["order_id"] != "4711" || shown.BodyReading["compression"] != "gzip" {
		t.Errorf("show -o json: exit %d, %v: %s%s", r.Code, err, r.Stdout, r.Stderr)
	}
	lines := func(r clitest.Result) int {
		return len(strings.Fields(strings.ReplaceAll(strings.TrimSpace(r.Stdout), " ", "")))
	}
	// A plain search finds the order number inside every body.
	r = c.Run("", "--config", config, "search", "4711", lot, "-o", "json")
	if r.Code != 0 || lines(r) != len(scenarios) {
		t.Errorf("search 4711: exit %d, want %d matches:\n%s%s", r.Code, len(scenarios), r.Stdout, r.Stderr)
	}
	for filter, want := range map[string]int{
		`decoded.amount > 1000 && decoded.customer.id == "C-77"`:          2, // kombu's and pika's JSON order
		`decoded.status == "STATUS_REFUSED" && decoded.items[0].qty == 2`: 1,
		`decoded.payer.vip && decoded.currency == "EUR"`:                  1,
	} {
		r = c.Run("", "--config", config, "list", lot, "--filter", filter, "-o", "json")
		if r.Code != 0 || lines(r) != want {
			t.Errorf("list --filter %s: exit %d, want %d lines:\n%s%s", filter, r.Code, want, r.Stdout, r.Stderr)
		}
	}
	// Replayed, each is the producer's bytes with its properties.
	r = c.Run("", "--config", config, "replay", lot, "--filter", `decoded.order_id == "4711"`, "--to", ":"+sink, "--yes")
	if r.Code != 0 {
		t.Fatalf("replay: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	brokertest.WaitDepth(t, lot, 0, 15*time.Second)
	for _, d := range brokertest.Drain(t, ch, sink) {
		m, ok := recorded[d.MessageId]
		if !ok {
			t.Errorf("sink holds %q", d.MessageId)
			continue
		}
		delete(recorded, d.MessageId)
		if !bytes.Equal(d.Body, m.Body) || d.ContentType != m.Properties.ContentType || d.ContentEncoding != m.Properties.ContentEncoding ||
			d.Headers["compression"] != m.Headers["compression"] {
			t.Errorf("%s replayed as %q %q %v, %d bytes; want the recorded bytes and properties", d.MessageId, d.ContentType, d.ContentEncoding, d.Headers["compression"], len(d.Body))
		}
	}
	if len(recorded) != 0 {
		t.Errorf("not replayed: %v", recorded)
	}
}

// TestRecordedBodiesEditedAndReplayed: `edit` opens a protobuf and an Avro
// body as JSON; an edit is encoded back in the body's format (the
// protobuf fields the schema does not name and the Confluent framing
// kept), an unedited draft replays the producer's bytes, and an edit that
// breaks the schema is refused naming the field, the message still parked.
func TestRecordedBodiesEditedAndReplayed(t *testing.T) {
	ch := brokertest.Channel(t)
	lot, sink := brokertest.Name(t, "lot"), brokertest.Name(t, "sink")
	brokertest.DeclareQueue(t, ch, lot, nil)
	brokertest.DeclareQueue(t, ch, sink, nil)
	proto, avro := brokertest.Recording(t, "pika-protobuf"), brokertest.Recording(t, "pika-avro-confluent")
	brokertest.ParkByReject(t, ch, lot, brokertest.Producing(proto, "proto-edited"), brokertest.Producing(proto, "proto-unedited"),
		brokertest.Producing(proto, "proto-broken"), brokertest.Producing(avro, "avro-edited"))
	root, err := brokertest.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	schemas := filepath.Join(root, "testdata", "frameworks", "schemas")
	// The flags name the schemas; the config maps the Confluent schema id.
	decode := []string{"--proto-path", schemas, "--proto", filepath.Join(schemas, "shop.proto"), "--avro-schema", filepath.Join(schemas, "payment.avsc"),
		"--config", writeConfluent(t)}
	edit := func(editor, id string) clitest.Result {
		c := clitest.NewCLI(t, "EDITOR="+editor, "VISUAL=")
		return c.Run("", append(decode, "edit", lot, id, "--to", ":"+sink, "--yes")...)
	}
	if r := edit("sed -i s/1200.5/99.5/", "proto-edited"); r.Code != 0 {
		t.Fatalf("edit proto-edited: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	if r := edit("true", "proto-unedited"); r.Code != 0 || !strings.Contains(r.Stderr, "unchanged") {
		t.Fatalf("edit proto-unedited: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	r := edit("sed -i s/STATUS_REFUSED/STATUS_NOPE/", "proto-broken")
	if r.Code == 0 || !strings.Contains(r.Stderr, "status") || strings.Count(strings.TrimSpace(r.Stderr), "\n") != 0 {
		t.Errorf("edit proto-broken: exit %d, want one line naming the field\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	// The Avro schema's decimal, written back from the edited number.
	if r := edit("sed -i s/1200.5/99.5/", "avro-edited"); r.Code != 0 {
		t.Fatalf("edit avro-edited: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	brokertest.WaitDepth(t, sink, 3, 15*time.Second)
	brokertest.WaitDepth(t, lot, 1, 15*time.Second) // proto-broken, still parked
	got := map[string]amqp.Delivery{}
	for _, d := range brokertest.Drain(t, ch, sink) {
		got[d.MessageId] = d
	}
	if !bytes.Equal(got["proto-unedited"].Body, proto.Body) {
		t.Errorf("the unedited draft replayed %x, not the producer's %x", got["proto-unedited"].Body, proto.Body)
	}
	// Edited: the recorded bytes but for the amount (a double: 8 bytes)
	// and the newer producer's field 13 still at the end.
	e := got["proto-edited"].Body
	if len(e) != len(proto.Body) || !bytes.HasSuffix(e, []byte("j\x03web")) || bytes.Equal(e, proto.Body) {
		t.Errorf("the edited protobuf body %x, recorded %x", e, proto.Body)
	}
	a := got["avro-edited"].Body
	if !bytes.HasPrefix(a, avro.Body[:5]) || bytes.Equal(a, avro.Body) || got["avro-edited"].ContentType != avro.Properties.ContentType {
		t.Errorf("the edited Avro body %x (%s), recorded %x", a, got["avro-edited"].ContentType, avro.Body)
	}
	c := clitest.NewCLI(t)
	brokertest.Publish(t, ch, "", lot, amqp.Publishing{MessageId: "check", ContentType: avro.Properties.ContentType, Body: a})
	r = c.Run("", append(decode, "show", lot, "check", "-o", "json")...)
	if r.Code != 0 || !strings.Contains(r.Stdout, `"amount":99.5`) || !strings.Contains(r.Stdout, `"payment_id":"PAY-1"`) {
		t.Errorf("the edited Avro body reads as: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
}

// writeConfluent is a config mapping the Confluent schema id 7 of the
// Avro recording to its schema.
func writeConfluent(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(p, []byte("decode:\n  confluent_ids: {7: payment.avsc}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}
