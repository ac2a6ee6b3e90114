package body

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/parkinglot/parkinglot/broker"
)

// The bodies real producers wrote (testdata/frameworks, recorded by its
// record script) read back as the document the producer sent, which the
// recording's notes hold: kombu's MessagePack zlib-compressed under its
// "compression" header, pika's gzip JSON under content_encoding.
func TestDecodeRecordedProducers(t *testing.T) {
	dir := filepath.Join("..", "..", "testdata", "frameworks", "schemas")
	schemas, err := LoadSchemas(context.Background(), Sources{ProtoPaths: []string{dir}, Protos: []string{filepath.Join(dir, "shop.proto")},
		AvroSchemas: []string{filepath.Join(dir, "payment.avsc")}, ConfluentIDs: map[uint32]string{7: "payment.avsc"}})
	if err != nil {
		t.Fatal(err)
	}
	reader := &Reader{Schemas: schemas}
	for _, c := range []struct {
		scenario, compression, from string
		format                      Format
	}{
		{"kombu-msgpack-zlib", "zlib", "compression", MessagePack},
		{"pika-gzip-json", "gzip", "content_encoding", JSON},
		{"pika-protobuf", "", "", Protobuf},
		{"pika-avro-confluent", "", "", Avro},
	} {
		data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "frameworks", c.scenario+".json"))
		if err != nil {
			t.Fatal(err)
		}
		var rec struct {
			Message json.RawMessage `json:"message"`
			Notes   struct {
				Decoded map[string]json.RawMessage `json:"decoded"`
			} `json:"notes"`
		}
		if err := json.Unmarshal(data, &rec); err != nil {
			t.Fatal(err)
		}
		var m broker.Message
		if err := m.UnmarshalJSON(rec.Message); err != nil {
			t.Fatal(err)
		}
		d := reader.Read("orders.process.parking-lot", m)
		if d.Err != nil || d.Compression != c.compression || d.CompressionFrom != c.from || d.Format != c.format {
			t.Errorf("%s: %+v", c.scenario, d)
			continue
		}
		// The producer's newer field 13 (channel "web": tag, length, 3
		// bytes) is unknown to the schema, and counted.
		if wantUnknown := map[string]int{"pika-protobuf": 5}[c.scenario]; d.Unknown != wantUnknown {
			t.Errorf("%s: %d unknown bytes, want %d", c.scenario, d.Unknown, wantUnknown)
		}
		got := d.Value.(map[string]any)
		if sig, ok := got["signature"]; ok { // bytes that are not UTF-8 stay bytes
			if !reflect.DeepEqual(sig, []byte{0x00, 0x9f, 0xfe}) {
				t.Errorf("%s: signature %#v", c.scenario, sig)
			}
			got["signature"], rec.Notes.Decoded["signature"] = nil, nil
		}
		// The same document, compared as JSON holds it, numbers exactly.
		a, _ := json.Marshal(JSONValue(got))
		b, _ := json.Marshal(rec.Notes.Decoded)
		if x, y := exactJSON(t, a), exactJSON(t, b); !reflect.DeepEqual(x, y) {
			t.Errorf("%s: decoded\n%s\nwant\n%s", c.scenario, a, b)
		}
	}
}

// exactJSON decodes b keeping numbers as they are written.
func exactJSON(t *testing.T, b []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// Which schema reads a protobuf body, first that speaks: the content
// type's messageType, the type property, the queue's rule, the default;
// without any, or with a message not loaded, the body says why in Err.
func TestDecodeChoosesTheSchema(t *testing.T) {
	dir := filepath.Join("..", "..", "testdata", "frameworks", "schemas")
	schemas, err := LoadSchemas(context.Background(), Sources{ProtoPaths: []string{dir}, Protos: []string{filepath.Join(dir, "shop.proto")}})
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "frameworks", "pika-protobuf.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rec struct {
		Message broker.Message `json:"message"`
	}
	if err := json.Unmarshal(data, &rec); err != nil {
		t.Fatal(err)
	}
	raw := rec.Message.Body
	order := Rule{Format: Protobuf, Type: "shop.Order", From: "config decode for orders.*"}
	r := &Reader{Schemas: schemas, Queues: []QueueRule{{Pattern: "orders.*", Rule: order}}, Default: Rule{Format: Protobuf, Type: "shop.Order", From: "--message-type"}}
	for _, c := range []struct {
		name, queue, contentType, typ string
		from                          string
		err                           error
	}{
		{"content type", "x", "application/x-protobuf; messageType=shop.Order", "", "content_type", nil},
		{"type property", "x", "application/protobuf", "shop.Order", "type", nil},
		{"queue rule", "orders.dlq", "", "", "config decode for orders.*", nil},
		{"default", "other", "", "", "--message-type", nil},
		{"unknown message", "x", "application/x-protobuf; messageType=shop.Nope", "", "", ErrFormat},
	} {
		m := broker.Message{Body: raw}
		m.Properties.ContentType, m.Properties.Type = c.contentType, c.typ
		d := r.Read(c.queue, m)
		if !errors.Is(d.Err, c.err) || c.err == nil && (d.Format != Protobuf || d.FormatFrom != c.from || d.Type != "shop.Order") {
			t.Errorf("%s: %+v", c.name, d)
		}
	}
	m := broker.Message{Body: raw}
	m.Properties.ContentType = "application/x-protobuf"
	if d := (&Reader{Schemas: schemas}).Read("x", m); !errors.Is(d.Err, ErrFormat) || d.Value != nil {
		t.Errorf("no message type anywhere: %+v", d)
	}
}
