package body

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"errors"
	"reflect"
	"testing"

	"github.com/vmihailenco/msgpack/v5"
)

func gz(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	w.Write(b)
	w.Close()
	return buf.Bytes()
}

func zl(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := zlib.NewWriter(&buf)
	w.Write(b)
	w.Close()
	return buf.Bytes()
}

func raw(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, _ := flate.NewWriter(&buf, flate.DefaultCompression)
	w.Write(b)
	w.Close()
	return buf.Bytes()
}

func mp(t *testing.T, v any) []byte {
	t.Helper()
	b, err := msgpack.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Each wrapping of deflate is undone whatever name announced it, and
// where from is said; a charset in content_encoding is no compression.
func TestDecodeUndoesCompressionFromItsBytes(t *testing.T) {
	doc := []byte(`{"order_id":"4711","amount":1200.5}`)
	want := map[string]any{"order_id": "4711", "amount": 1200.5}
	for _, c := range []struct {
		name     string
		in       Input
		algo     string
		from     string
		jsonFrom string
	}{
		{"gzip by content_encoding", Input{ContentType: "application/json", ContentEncoding: "gzip", Body: gz(t, doc)}, "gzip", "content_encoding", "content_type"},
		{"deflate that is zlib", Input{ContentType: "application/json", ContentEncoding: "deflate", Body: zl(t, doc)}, "zlib", "content_encoding", "content_type"},
		{"deflate that is raw", Input{ContentEncoding: "deflate", Body: raw(t, doc)}, "deflate", "content_encoding", ""},
		{"kombu's compression header (zlib)", Input{ContentType: "application/json", ContentEncoding: "utf-8", Compression: "application/x-gzip", Body: zl(t, doc)}, "zlib", "compression", "content_type"},
		{"a charset is no compression", Input{ContentType: "application/json", ContentEncoding: "utf-8", Body: doc}, "", "", "content_type"},
	} {
		d := Decode(c.in)
		if d.Err != nil || d.Compression != c.algo || d.CompressionFrom != c.from || d.Format != JSON || d.FormatFrom != c.jsonFrom {
			t.Errorf("%s: %+v", c.name, d)
			continue
		}
		if !bytes.Equal(d.Bytes, doc) || !reflect.DeepEqual(d.Value, want) {
			t.Errorf("%s: bytes %q value %#v", c.name, d.Bytes, d.Value)
		}
	}
}

// MessagePack decodes by its content type into plain values: string
// keys, int, float64, UTF-8 binary as a string, other binary as bytes.
func TestDecodeMessagePackIntoPlainValues(t *testing.T) {
	in := map[string]any{
		"order_id": "4711", "amount": 1200.5, "qty": int8(3), "big": uint64(1 << 40),
		"items": []any{map[string]any{"sku": "A-1"}}, "note": []byte("utf-8 bytes"), "blob": []byte{0xff, 0x00},
		"nested": map[int]string{7: "seven"}, "ok": true, "none": nil,
	}
	d := Decode(Input{ContentType: "application/x-msgpack", Body: mp(t, in)})
	if d.Err != nil || d.Format != MessagePack || d.FormatFrom != "content_type" {
		t.Fatalf("%+v", d)
	}
	want := map[string]any{
		"order_id": "4711", "amount": 1200.5, "qty": 3, "big": 1 << 40,
		"items": []any{map[string]any{"sku": "A-1"}}, "note": "utf-8 bytes", "blob": []byte{0xff, 0x00},
		"nested": map[string]any{"7": "seven"}, "ok": true, "none": nil,
	}
	if !reflect.DeepEqual(d.Value, want) {
		t.Errorf("got %#v\nwant %#v", d.Value, want)
	}
}

// A body that does not keep its properties' promise says why, typed, and
// keeps its bytes; a body without promises is read as it is.
func TestDecodeSaysWhyABodyIsNotRead(t *testing.T) {
	for _, c := range []struct {
		name string
		in   Input
		want error
	}{
		{"gzip that is not", Input{ContentEncoding: "gzip", Body: []byte("plain text")}, ErrCompression},
		{"an unknown compression", Input{ContentEncoding: "br", Body: []byte{1, 2, 3}}, ErrCompression},
		{"msgpack that is not", Input{ContentType: "application/msgpack", Body: []byte{0xc1}}, ErrFormat},
		{"msgpack with bytes after it", Input{ContentType: "application/msgpack", Body: append(mp(t, 1), 0x01)}, ErrFormat},
		{"JSON that is not", Input{ContentType: "application/json", Body: []byte("{oops")}, ErrFormat},
	} {
		d := Decode(c.in)
		if !errors.Is(d.Err, c.want) || d.Value != nil {
			t.Errorf("%s: %+v, want %v", c.name, d, c.want)
		}
		if c.want == ErrCompression && !bytes.Equal(d.Bytes, c.in.Body) {
			t.Errorf("%s: bytes %q, want the raw body", c.name, d.Bytes)
		}
	}
	for _, b := range []string{"plain text", "4711", "{not json"} {
		if d := Decode(Input{Body: []byte(b)}); d.Err != nil || d.Format != None || string(d.Bytes) != b {
			t.Errorf("%q: %+v, want it as it is", b, d)
		}
	}
}

// A small body that inflates without end is refused, not read whole.
func TestDecodeBoundsWhatABodyInflatesTo(t *testing.T) {
	bomb := gz(t, make([]byte, MaxDecompressed+1))
	if d := Decode(Input{ContentEncoding: "gzip", Body: bomb}); !errors.Is(d.Err, ErrCompression) || len(d.Bytes) != len(bomb) {
		t.Errorf("%d compressed bytes: err %v, %d bytes kept", len(bomb), d.Err, len(d.Bytes))
	}
}
