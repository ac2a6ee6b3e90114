package body

import (
	"encoding/base64"
	"fmt"
	"math/big"
	"time"

	"github.com/hamba/avro/v2"
)

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
