package body

import (
	"encoding/json"
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
	for _, c := range []struct {
		scenario, compression, from string
		format                      Format
	}{
		{"kombu-msgpack-zlib", "zlib", "compression", MessagePack},
		{"pika-gzip-json", "gzip", "content_encoding", JSON},
	} {
		data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "frameworks", c.scenario+".json"))
		if err != nil {
			t.Fatal(err)
		}
		var rec struct {
			Message json.RawMessage `json:"message"`
			Notes   struct {
				Decoded map[string]any `json:"decoded"`
			} `json:"notes"`
		}
		if err := json.Unmarshal(data, &rec); err != nil {
			t.Fatal(err)
		}
		var m broker.Message
		if err := m.UnmarshalJSON(rec.Message); err != nil {
			t.Fatal(err)
		}
		d := Of(m)
		if d.Err != nil || d.Compression != c.compression || d.CompressionFrom != c.from || d.Format != c.format {
			t.Errorf("%s: %+v", c.scenario, d)
			continue
		}
		got := d.Value.(map[string]any)
		if sig, ok := got["signature"]; ok { // MessagePack bin that is not UTF-8 stays bytes
			if !reflect.DeepEqual(sig, []byte{0x00, 0x9f, 0xfe}) {
				t.Errorf("%s: signature %#v", c.scenario, sig)
			}
			got["signature"] = nil
		}
		// The same document, compared as JSON holds it (ints and floats alike).
		a, _ := json.Marshal(JSONValue(got))
		b, _ := json.Marshal(rec.Notes.Decoded)
		var x, y any
		json.Unmarshal(a, &x)
		json.Unmarshal(b, &y)
		if !reflect.DeepEqual(x, y) {
			t.Errorf("%s: decoded\n%s\nwant\n%s", c.scenario, a, b)
		}
	}
}
