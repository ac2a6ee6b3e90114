package body

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/broker/brokertest"
)

func recordedReader(t *testing.T) *Reader {
	t.Helper()
	dir := filepath.Join("..", "..", "testdata", "frameworks", "schemas")
	schemas, err := LoadSchemas(context.Background(), Sources{ProtoPaths: []string{dir}, Protos: []string{filepath.Join(dir, "shop.proto")},
		AvroSchemas: []string{filepath.Join(dir, "payment.avsc")}, ConfluentIDs: map[uint32]string{7: "payment.avsc"}})
	if err != nil {
		t.Fatal(err)
	}
	return &Reader{Schemas: schemas}
}

// Every recorded body, decoded and written back unedited, decodes to the
// same document; protobuf (the newer producer's field kept) and Avro (its
// Confluent framing kept) come back byte for byte. An edit lands in the
// body, in its format and compression.
func TestEncodeRecordedBodies(t *testing.T) {
	r := recordedReader(t)
	for _, c := range []struct {
		scenario  string
		identical bool
		edit      func(map[string]any)
		check     string
	}{
		{"kombu-msgpack-zlib", false, func(m map[string]any) { m["amount"] = 99.5 }, "amount"},
		{"pika-gzip-json", false, func(m map[string]any) { m["amount"] = 99.5 }, "amount"},
		{"pika-protobuf", true, func(m map[string]any) { m["amount"] = 99.5 }, "amount"},
		{"pika-avro-confluent", true, func(m map[string]any) { m["amount"] = 99.5 }, "amount"},
	} {
		m := recordingOf(t, c.scenario)
		d := r.Read("q", m)
		if !Editable(d) {
			t.Fatalf("%s: not editable: %+v", c.scenario, d)
		}
		shown := editText(t, d)
		out, err := Encode(r.Schemas, d, m.Body, shown)
		if err != nil {
			t.Fatalf("%s: %v", c.scenario, err)
		}
		if c.identical && !bytes.Equal(out, m.Body) {
			t.Errorf("%s: unedited, %d bytes back, not the %d recorded:\n%x\n%x", c.scenario, len(out), len(m.Body), out, m.Body)
		}
		again := m
		again.Body = out
		if d2 := r.Read("q", again); d2.Err != nil || !reflect.DeepEqual(d2.Value, d.Value) || d2.Compression != d.Compression {
			t.Errorf("%s: written back, it reads as %+v", c.scenario, d2)
		}
		var doc map[string]any
		if err := json.Unmarshal(shown, &doc); err != nil {
			t.Fatal(err)
		}
		c.edit(doc)
		edited, _ := json.Marshal(doc)
		out, err = Encode(r.Schemas, d, m.Body, edited)
		if err != nil {
			t.Fatalf("%s: edited: %v", c.scenario, err)
		}
		again.Body = out
		if d2 := r.Read("q", again); d2.Err != nil || d2.Value.(map[string]any)[c.check] != 99.5 {
			t.Errorf("%s: the edit did not land: %+v", c.scenario, d2)
		}
	}
}

// An edit that does not fit the schema is refused naming the field.
func TestEncodeRefusesWhatDoesNotFit(t *testing.T) {
	r := recordedReader(t)
	for scenario, c := range map[string]struct {
		edit func(map[string]any)
		want string
	}{
		"pika-protobuf":       {func(m map[string]any) { m["items"].([]any)[0].(map[string]any)["qty"] = "two" }, "qty"},
		"pika-avro-confluent": {func(m map[string]any) { m["currency"] = "CHF" }, "currency"},
		"kombu-msgpack-zlib":  {nil, "not valid JSON"},
	} {
		m := recordingOf(t, scenario)
		d := r.Read("q", m)
		edited := []byte(`{"order_id": `)
		if c.edit != nil {
			var doc map[string]any
			if err := json.Unmarshal(editText(t, d), &doc); err != nil {
				t.Fatal(err)
			}
			c.edit(doc)
			edited, _ = json.Marshal(doc)
		}
		_, err := Encode(r.Schemas, d, m.Body, edited)
		if !errors.Is(err, ErrEncode) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want ErrEncode naming %q", scenario, err, c.want)
		}
	}
}

// editText is the draft an editor would open: the document as indented
// JSON, or the decompressed text.
func editText(t *testing.T, d Decoded) []byte {
	t.Helper()
	if d.Format == MessagePack || d.Format == Protobuf || d.Format == Avro {
		b, err := json.MarshalIndent(JSONValue(d.Value), "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	return d.Bytes
}

func recordingOf(t *testing.T, scenario string) broker.Message {
	t.Helper()
	return brokertest.Recording(t, scenario)
}
