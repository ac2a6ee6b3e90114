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

	"github.com/hamba/avro/v2"
	amqp "github.com/rabbitmq/amqp091-go"

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
			Notes struct {
				Decoded map[string]json.RawMessage `json:"decoded"`
			} `json:"notes"`
		}
		if err := json.Unmarshal(data, &rec); err != nil {
			t.Fatal(err)
		}
		m := recordingOf(t, c.scenario)
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
	raw := recordingOf(t, "pika-protobuf").Body
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

// The other ways to name a schema: a descriptor set (protoc -o) instead of
// the .proto, a header the config names, an Avro schema by the type
// property, a queue rule over a raw datum, Avro's single-object encoding
// by the schema's fingerprint.
func TestDecodeOtherSchemaSources(t *testing.T) {
	dir := filepath.Join("..", "..", "testdata", "frameworks", "schemas")
	schemas, err := LoadSchemas(context.Background(), Sources{Protos: []string{filepath.Join(dir, "shop.binpb")}, AvroSchemas: []string{filepath.Join(dir, "payment.avsc")}})
	if err != nil {
		t.Fatal(err)
	}
	proto, avroMsg := recordingOf(t, "pika-protobuf"), recordingOf(t, "pika-avro-confluent")
	datum := avroMsg.Body[5:] // without the Confluent framing
	fp, err := schemas.avro["shop.Payment"].FingerprintUsing(avro.CRC64Avro)
	if err != nil {
		t.Fatal(err)
	}
	single := append(append([]byte{0xc3, 0x01}, reverse(fp)...), datum...) // the fingerprint little-endian
	withHeader := broker.Message{Body: proto.Body, Headers: amqp.Table{"x-proto-type": "shop.Order"}}
	typed := broker.Message{Body: datum}
	typed.Properties.Type = "shop.Payment"
	r := &Reader{Schemas: schemas, TypeHeader: "x-proto-type", Queues: []QueueRule{{Pattern: "payments.*", Rule: Rule{Format: Avro, Type: "shop.Payment", From: "config decode for payments.*"}}}}
	for _, c := range []struct {
		name, queue string
		m           broker.Message
		format      Format
		from        string
	}{
		{"descriptor set, content type", "x", proto, Protobuf, "content_type"},
		{"header", "x", withHeader, Protobuf, "header x-proto-type"},
		{"Avro by the type property", "x", typed, Avro, "type"},
		{"raw datum by the queue's rule", "payments.dlq", broker.Message{Body: datum}, Avro, "config decode for payments.*"},
		{"single-object encoding", "x", broker.Message{Body: single}, Avro, "single-object encoding"},
	} {
		d := r.Read(c.queue, c.m)
		doc, _ := d.Value.(map[string]any)
		if d.Err != nil || d.Format != c.format || d.FormatFrom != c.from || doc["order_id"] != "4711" {
			t.Errorf("%s: %+v", c.name, d)
		}
	}
}

func reverse(b []byte) []byte {
	out := make([]byte, len(b))
	for i, v := range b {
		out[len(b)-1-i] = v
	}
	return out
}
