package body

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/vmihailenco/msgpack/v5"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
)

// ErrEncode is an edited document that does not fit its format or schema;
// the error names the field and the reason.
var ErrEncode = errors.New("the edited body does not fit")

// Editable reports whether d can be edited as a document and encoded back:
// decoded without error, by a format this package writes, under a
// compression it writes.
func Editable(d Decoded) bool {
	if d.Err != nil || d.Compression == "bzip2" {
		return false
	}
	return d.Format == MessagePack || d.Format == Protobuf || d.Format == Avro || d.Compression != ""
}

// Encode writes edited — the JSON of a document d decoded, or for a body
// only decompressed its new text — back in d's format and compression,
// raw being the body d was read from (its framing and the protobuf fields
// the schema does not name are kept). s holds d's schemas.
func Encode(s *Schemas, d Decoded, raw, edited []byte) ([]byte, error) {
	var out []byte
	switch d.Format {
	case MessagePack:
		v, err := jsonDocument(edited)
		if err != nil {
			return nil, err
		}
		if out, err = msgpack.Marshal(likeOriginal(d.Value, v)); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrEncode, err)
		}
	case Protobuf:
		md, ok := s.message(d.Type)
		if !ok {
			return nil, fmt.Errorf("%w: no message %s loaded", ErrEncode, d.Type)
		}
		m := dynamicpb.NewMessage(md)
		if err := (protojson.UnmarshalOptions{Resolver: s.types}).Unmarshal(edited, m); err != nil {
			return nil, fmt.Errorf("%w %s: %v", ErrEncode, d.Type, err)
		}
		// The fields a newer producer wrote and the schema does not name
		// go back as they came.
		orig := dynamicpb.NewMessage(md)
		if err := (proto.UnmarshalOptions{Resolver: s.types}).Unmarshal(raw, orig); err == nil {
			m.SetUnknown(orig.GetUnknown())
		}
		b, err := (proto.MarshalOptions{Deterministic: true}).Marshal(m)
		if err != nil {
			return nil, fmt.Errorf("%w %s: %v", ErrEncode, d.Type, err)
		}
		out = inNumberOrder(md, b)
	case Avro:
		sc, ok := s.avroSchema(d.Type)
		if !ok {
			return nil, fmt.Errorf("%w: no Avro schema %s loaded", ErrEncode, d.Type)
		}
		v, err := jsonDocument(edited)
		if err != nil {
			return nil, err
		}
		native, err := avroNative(sc, v, "")
		if err != nil {
			return nil, fmt.Errorf("%w %s: %v", ErrEncode, d.Type, err)
		}
		datum, err := avroAPI.Marshal(sc, native)
		if err != nil {
			return nil, fmt.Errorf("%w %s: %v", ErrEncode, d.Type, err)
		}
		out = append(framingOf(d, raw), datum...)
	default:
		if d.Format == JSON || d.FormatFrom != "" {
			if _, err := jsonDocument(edited); err != nil {
				return nil, err
			}
		}
		out = edited
	}
	return compress(d.Compression, out)
}

// likeOriginal gives the edited value of a schema-less document (JSON
// cannot tell them apart) the types the original had where it still fits:
// binary that JSON showed as base64, a timestamp it showed as text.
func likeOriginal(orig, edited any) any {
	switch e := edited.(type) {
	case map[string]any:
		o, _ := orig.(map[string]any)
		for k, v := range e {
			e[k] = likeOriginal(o[k], v)
		}
	case []any:
		o, _ := orig.([]any)
		for i, v := range e {
			var ov any
			if i < len(o) {
				ov = o[i]
			}
			e[i] = likeOriginal(ov, v)
		}
	case string:
		switch orig.(type) {
		case []byte:
			if b, err := base64.StdEncoding.DecodeString(e); err == nil {
				return b
			}
		case time.Time:
			if t, err := time.Parse(time.RFC3339Nano, e); err == nil {
				return t
			}
		}
	}
	return edited
}

// jsonDocument reads edited JSON keeping integers whole (int64) and other
// numbers float64.
func jsonDocument(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("%w: not valid JSON: %v", ErrEncode, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%w: more than one JSON document", ErrEncode)
	}
	return numbers(v), nil
}

func numbers(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = numbers(e)
		}
	case []any:
		for i, e := range x {
			x[i] = numbers(e)
		}
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		f, _ := x.Float64()
		return f
	}
	return v
}

// framingOf is the Avro framing raw began with (the Confluent prefix or
// the single-object header), kept for the edited datum.
func framingOf(d Decoded, raw []byte) []byte {
	n := 0
	switch {
	case d.Framing == "single-object encoding":
		n = 10
	case d.Framing != "":
		n = 5
	}
	return append([]byte(nil), raw[:min(n, len(raw))]...)
}

// compress applies c again (the name Decoded.Compression gives).
func compress(c string, b []byte) ([]byte, error) {
	var buf bytes.Buffer
	var w interface {
		Write([]byte) (int, error)
		Close() error
	}
	switch c {
	case "":
		return b, nil
	case "gzip":
		w = gzip.NewWriter(&buf)
	case "zlib":
		w = zlib.NewWriter(&buf)
	case "deflate":
		fw, err := flate.NewWriter(&buf, flate.DefaultCompression)
		if err != nil {
			return nil, err
		}
		w = fw
	default:
		return nil, fmt.Errorf("%w: a %s body cannot be compressed again", ErrEncode, c)
	}
	if _, err := w.Write(b); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// inNumberOrder is a message's wire bytes with its fields in field-number
// order (stable: a repeated field keeps its order), nested messages too,
// as protoc's C++, Java and Python code writes them; Go writes a oneof's
// field last. Bytes it cannot parse are returned as they are.
func inNumberOrder(md protoreflect.MessageDescriptor, b []byte) []byte {
	type field struct {
		num protowire.Number
		raw []byte
	}
	var fields []field
	for rest := b; len(rest) > 0; {
		num, typ, n := protowire.ConsumeTag(rest)
		if n < 0 {
			return b
		}
		m := protowire.ConsumeFieldValue(num, typ, rest[n:])
		if m < 0 {
			return b
		}
		raw := rest[:n+m]
		if fd := md.Fields().ByNumber(num); typ == protowire.BytesType && fd != nil && fd.Kind() == protoreflect.MessageKind {
			inner, _ := protowire.ConsumeBytes(rest[n:])
			raw = protowire.AppendBytes(protowire.AppendTag(nil, num, typ), inNumberOrder(fd.Message(), inner))
		}
		fields = append(fields, field{num, raw})
		rest = rest[n+m:]
	}
	slices.SortStableFunc(fields, func(a, b field) int { return int(a.num) - int(b.num) })
	out := make([]byte, 0, len(b))
	for _, f := range fields {
		out = append(out, f.raw...)
	}
	return out
}
