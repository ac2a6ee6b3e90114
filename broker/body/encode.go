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
	"math/big"
	"slices"
	"time"

	"github.com/hamba/avro/v2"
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

// avroNative turns a JSON document into the values hamba/avro writes for
// sc: records and maps as maps, decimals as *big.Rat, timestamps and dates
// as time.Time, bytes from base64, every integer and float of its width.
// path names the field for an error.
func avroNative(sc avro.Schema, v any, path string) (any, error) {
	where := func(format string, a ...any) error {
		p := path
		if p == "" {
			p = "the document"
		}
		return fmt.Errorf("%s: "+format, append([]any{p}, a...)...)
	}
	switch s := sc.(type) {
	case *avro.RecordSchema:
		m, ok := v.(map[string]any)
		if !ok {
			return nil, where("want an object")
		}
		out := map[string]any{}
		for _, f := range s.Fields() {
			fv, present := m[f.Name()]
			if !present && f.HasDefault() {
				fv = f.Default()
			}
			nv, err := avroNative(f.Type(), fv, join(path, f.Name()))
			if err != nil {
				return nil, err
			}
			out[f.Name()] = nv
		}
		for k := range m {
			if s.Fields() != nil && fieldOf(s, k) == nil {
				return nil, where("%s is not a field of %s", k, s.FullName())
			}
		}
		return out, nil
	case *avro.UnionSchema:
		if v == nil {
			return nil, nil
		}
		var last error
		for _, t := range s.Types() {
			if t.Type() == avro.Null {
				continue
			}
			nv, err := avroNative(t, v, path)
			if err == nil {
				if len(s.Types()) == 2 && s.Nullable() {
					return nv, nil
				}
				return map[string]any{unionName(t): nv}, nil
			}
			last = err
		}
		return nil, last
	case *avro.ArraySchema:
		l, ok := v.([]any)
		if !ok {
			return nil, where("want an array")
		}
		out := make([]any, len(l))
		for i, e := range l {
			nv, err := avroNative(s.Items(), e, fmt.Sprintf("%s[%d]", path, i))
			if err != nil {
				return nil, err
			}
			out[i] = nv
		}
		return out, nil
	case *avro.MapSchema:
		m, ok := v.(map[string]any)
		if !ok {
			return nil, where("want an object")
		}
		out := map[string]any{}
		for k, e := range m {
			nv, err := avroNative(s.Values(), e, join(path, k))
			if err != nil {
				return nil, err
			}
			out[k] = nv
		}
		return out, nil
	case *avro.EnumSchema:
		str, ok := v.(string)
		if !ok {
			return nil, where("want one of %v", s.Symbols())
		}
		for _, sym := range s.Symbols() {
			if sym == str {
				return str, nil
			}
		}
		return nil, where("%q is not one of %v", str, s.Symbols())
	case *avro.PrimitiveSchema:
		return avroPrimitive(s, v, where)
	case *avro.FixedSchema:
		return avroBytes(v, where)
	}
	return v, nil
}

func avroPrimitive(s *avro.PrimitiveSchema, v any, where func(string, ...any) error) (any, error) {
	if ls := s.Logical(); ls != nil {
		switch ls.Type() {
		case avro.Decimal:
			r := new(big.Rat)
			switch x := v.(type) {
			case int64:
				return r.SetInt64(x), nil
			case float64:
				return r.SetFloat64(x), nil
			case string:
				if _, ok := r.SetString(x); ok {
					return r, nil
				}
			}
			return nil, where("want a decimal number")
		case avro.TimestampMillis, avro.TimestampMicros, avro.Date, avro.LocalTimestampMillis, avro.LocalTimestampMicros:
			str, ok := v.(string)
			t, err := time.Parse(time.RFC3339Nano, str)
			if !ok || err != nil {
				return nil, where("want a time as RFC 3339 (2025-12-06T05:46:40.123Z)")
			}
			return t, nil
		}
	}
	switch s.Type() {
	case avro.Null:
		if v != nil {
			return nil, where("want null")
		}
		return nil, nil
	case avro.Boolean:
		if b, ok := v.(bool); ok {
			return b, nil
		}
		return nil, where("want true or false")
	case avro.Int:
		if i, ok := v.(int64); ok && i == int64(int32(i)) {
			return int32(i), nil
		}
		return nil, where("want a 32-bit integer")
	case avro.Long:
		if i, ok := v.(int64); ok {
			return i, nil
		}
		return nil, where("want an integer")
	case avro.Float, avro.Double:
		var f float64
		switch x := v.(type) {
		case int64:
			f = float64(x)
		case float64:
			f = x
		default:
			return nil, where("want a number")
		}
		if s.Type() == avro.Float {
			return float32(f), nil
		}
		return f, nil
	case avro.String:
		if str, ok := v.(string); ok {
			return str, nil
		}
		return nil, where("want a string")
	case avro.Bytes:
		return avroBytes(v, where)
	}
	return v, nil
}

// avroBytes reads bytes as JSON shows them (base64).
func avroBytes(v any, where func(string, ...any) error) (any, error) {
	str, ok := v.(string)
	b, err := base64.StdEncoding.DecodeString(str)
	if !ok || err != nil {
		return nil, where("want bytes in base64")
	}
	return b, nil
}

func fieldOf(s *avro.RecordSchema, name string) *avro.Field {
	for _, f := range s.Fields() {
		if f.Name() == name {
			return f
		}
	}
	return nil
}

func unionName(t avro.Schema) string {
	if n, ok := t.(avro.NamedSchema); ok {
		return n.FullName()
	}
	return string(t.Type())
}

func join(path, k string) string {
	if path == "" {
		return k
	}
	return path + "." + k
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
