//go:build integration

package ui

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/broker/body"
	"github.com/parkinglot/parkinglot/broker/brokertest"
	"github.com/parkinglot/parkinglot/ui/cli/clitest"
)

// TestTUIShowsAndEditsDecodedBodies drives the real binary in tmux: a
// protobuf and an Avro body, recorded from their producers and rejected
// into a parking lot, open decoded with the config's schemas, saying which
// schema read them; v shows the raw bytes as hex and back; the Avro one,
// edited as JSON, is replayed to its origin in its Confluent framing with
// the edit; quitting leaves the other parked.
func TestTUIShowsAndEditsDecodedBodies(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Fatal("the end-to-end test needs tmux (make broker installs it): ", err)
	}
	ch := brokertest.Channel(t)
	lot := brokertest.Name(t, "lot")
	brokertest.DeclareQueue(t, ch, lot, nil)
	var msgs []amqp.Publishing
	for _, s := range []string{"pika-protobuf", "pika-avro-confluent"} {
		msgs = append(msgs, brokertest.Producing(brokertest.Recording(t, s), s))
	}
	work := brokertest.ParkByReject(t, ch, lot, msgs...)

	root, err := brokertest.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	schemas := filepath.Join(root, "testdata", "frameworks", "schemas")
	home := t.TempDir()
	config := filepath.Join(home, "config.yaml")
	if err := os.WriteFile(config, []byte("decode:\n  proto_path: [.]\n  proto: [shop.proto]\n  avro_schema: [payment.avsc]\n  confluent_ids: {7: payment.avsc}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// The config's paths are relative to it: the schemas beside it.
	for _, f := range []string{"shop.proto", "payment.avsc"} {
		b, err := os.ReadFile(filepath.Join(schemas, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(home, f), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	env := append(os.Environ(), "PARKINGLOT_URL="+brokertest.URL(), "PARKINGLOT_MANAGEMENT_URL="+brokertest.ManagementURL(),
		"XDG_CONFIG_HOME="+home, "XDG_STATE_HOME="+home, "NO_COLOR=1",
		"EDITOR=sed -i s/1200.5/99.5/", "VISUAL=") // the "editor" lowers the amount
	tm := newTmux(t, env, 140, 60, clitest.Binary(t)+" --config "+config+" tui "+lot)
	tm.waitFor("the list", "2 messages")
	tm.waitFor("the browse to end", "all given back")

	tm.keys("Enter")
	tm.waitFor("the message", "Body")
	tm.keys("G")
	screen := tm.waitFor("the decoded body", `"order_id": "4711"`)
	for _, want := range []string{"protobuf shop.Order (content_type", "5 bytes of fields shop.Order does not name", `"status": "STATUS_REFUSED"`} {
		if !strings.Contains(screen, want) {
			t.Errorf("the protobuf message lacks %q:\n%s", want, screen)
		}
	}
	tm.keys("v")
	tm.waitFor("the raw bytes", "the bytes as they are")
	tm.waitFor("the hex dump", "00000000  0a 04 34 37 31 31")
	tm.keys("v")
	tm.waitFor("the body as read again", `"order_id": "4711"`)

	// Escape alone: an escape followed at once by an arrow's sequence
	// reads as alt+arrow.
	tm.keys("Escape")
	tm.waitGone("the message screen", "Body (")
	tm.keys("Down")
	tm.keys("Enter")
	tm.waitFor("the next message", "Body (Avro")
	tm.keys("G")
	screen = tm.waitFor("the Avro body", `"payment_id": "PAY-1"`)
	if !strings.Contains(screen, "Avro shop.Payment (Confluent schema id 7), shown as JSON") {
		t.Errorf("the Avro message does not say what read it:\n%s", screen)
	}

	// Edit the Avro payment as JSON and replay it to its origin (the
	// queue whose consumer rejected it).
	tm.keys("e")
	tm.waitFor("the edit's plan", "Edit and replay")
	tm.waitFor("the edit's route", "/ "+work+" → reaches")
	tm.keys("Enter")
	tm.waitFor("the edited replay", "replayed (edited) 1")
	waitDepth(t, ch, work, 1, work+" (the edited payment)")
	d := brokertest.MustGet(t, ch, work)
	_ = d.Ack(false)
	if d.MessageId != "pika-avro-confluent" || len(d.Body) < 5 || string(d.Body[:5]) != "\x00\x00\x00\x00\x07" || d.ContentType != "avro/binary" {
		t.Errorf("the edited payment arrived as %s %q %x", d.MessageId, d.ContentType, d.Body)
	}
	avsc, err := body.LoadSchemas(context.Background(), body.Sources{AvroSchemas: []string{filepath.Join(schemas, "payment.avsc")}, ConfluentIDs: map[uint32]string{7: "payment.avsc"}})
	if err != nil {
		t.Fatal(err)
	}
	edited := (&body.Reader{Schemas: avsc}).Read(work, broker.Message{Body: d.Body})
	if doc, _ := edited.Value.(map[string]any); edited.Err != nil || doc["amount"] != 99.5 || doc["payment_id"] != "PAY-1" {
		t.Errorf("the edited payment reads as %+v", edited)
	}

	tm.keys("q")
	tm.waitFor("the program to end", "EXITED:0")
	waitDepth(t, ch, lot, 1, "after quitting the parking lot (the protobuf order; the edited payment left)")
}
