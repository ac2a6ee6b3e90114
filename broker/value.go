package broker

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"time"
	"unicode/utf8"

	amqp "github.com/rabbitmq/amqp091-go"
)

// The JSON form of a header value names its AMQP type, so that an export
// read back gives the same wire type: {"type":"int32","value":3}.
// Strings that are not valid UTF-8 and non-finite floats are carried as
// {"type":"string","base64":"..."} and {"type":"float64","value":"NaN"}.
type typedValue struct {
	Type   string          `json:"type"`
	Value  json.RawMessage `json:"value,omitempty"`
	Base64 string          `json:"base64,omitempty"`
}

type decimalJSON struct {
	Scale uint8 `json:"scale"`
	Value int32 `json:"value"`
}

// maxDepth is amqp091-go's own reading limit (read.go maxFieldDepth),
// counted the same way: the broker accepts deeper headers, but a consumer
// built on amqp091-go then fails the whole connection with a frame error
// (measured on 3.10.8), so the JSON form refuses to build such a message.
const maxDepth = 32

// maxElements is amqp091-go's limit on entries in one table or array
// (read.go maxContainerElements); more would make the message unreadable.
const maxElements = 8192

// ErrBadValue marks a header value that cannot be encoded or decoded.
var ErrBadValue = errors.New("bad header value")

// TypeName returns the AMQP type name parkinglot uses for a decoded value.
func TypeName(v any) string {
	switch v.(type) {
	case nil:
		return "void"
	case bool:
		return "bool"
	case int8:
		return "int8"
	case uint8:
		return "uint8"
	case int16:
		return "int16"
	case uint16:
		return "uint16"
	case int32:
		return "int32"
	case int:
		return "int32" // amqp091-go writes Go int as a signed 32-bit field
	case uint32:
		return "uint32"
	case int64:
		return "int64"
	case float32:
		return "float32"
	case float64:
		return "float64"
	case amqp.Decimal:
		return "decimal"
	case string:
		return "string"
	case []byte:
		return "bytes"
	case time.Time:
		return "timestamp"
	case amqp.Table, map[string]any:
		return "table"
	case []any:
		return "array"
	}
	return fmt.Sprintf("%T", v)
}

// EncodeTable returns the typed JSON form of a header table.
func EncodeTable(t amqp.Table) (json.RawMessage, error) {
	return encodeTable(t, 0)
}

func encodeTable(t amqp.Table, depth int) (json.RawMessage, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("%w: nested deeper than %d", ErrBadValue, maxDepth)
	}
	keys := make([]string, 0, len(t))
	for k := range t {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			buf.WriteByte(',')
		}
		if !utf8.ValidString(k) {
			// JSON keys cannot carry it: encoding would silently change the key.
			return nil, fmt.Errorf("%w: header name %q is not valid UTF-8", ErrBadValue, k)
		}
		kb, _ := json.Marshal(k)
		buf.Write(kb)
		buf.WriteByte(':')
		vb, err := encodeValue(t[k], depth+1)
		if err != nil {
			return nil, fmt.Errorf("header %q: %w", k, err)
		}
		buf.Write(vb)
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

func encodeValue(v any, depth int) (json.RawMessage, error) {
	tv := typedValue{Type: TypeName(v)}
	var raw any
	switch x := v.(type) {
	case nil:
		return json.Marshal(tv)
	case int:
		if x < math.MinInt32 || x > math.MaxInt32 {
			return nil, fmt.Errorf("%w: Go int %d does not fit the int32 amqp091-go writes", ErrBadValue, x)
		}
		raw = x
	case bool, int8, uint8, int16, uint16, int32, uint32, int64:
		raw = x
	case float32:
		f := float64(x)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			raw = strconv.FormatFloat(f, 'g', -1, 32)
		} else {
			tv.Value = json.RawMessage(strconv.FormatFloat(f, 'g', -1, 32))
		}
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			raw = strconv.FormatFloat(x, 'g', -1, 64)
		} else {
			tv.Value = json.RawMessage(strconv.FormatFloat(x, 'g', -1, 64))
		}
	case amqp.Decimal:
		raw = decimalJSON{Scale: x.Scale, Value: x.Value}
	case string:
		if !utf8.ValidString(x) {
			tv.Base64 = base64.StdEncoding.EncodeToString([]byte(x))
			return json.Marshal(tv)
		}
		raw = x
	case []byte:
		raw = base64.StdEncoding.EncodeToString(x)
	case time.Time:
		if y := x.UTC().Year(); y < 0 || y > 9999 {
			// RFC 3339 has four-digit years; the wire has 64-bit seconds
			// (a producer writing milliseconds lands here): keep the number.
			raw = x.Unix()
		} else {
			raw = x.UTC().Format(time.RFC3339)
		}
	case amqp.Table:
		b, err := encodeTable(x, depth)
		if err != nil {
			return nil, err
		}
		tv.Value = b
	case map[string]any:
		b, err := encodeTable(amqp.Table(x), depth)
		if err != nil {
			return nil, err
		}
		tv.Value = b
	case []any:
		if depth > maxDepth {
			return nil, fmt.Errorf("%w: nested deeper than %d", ErrBadValue, maxDepth)
		}
		var buf bytes.Buffer
		buf.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				buf.WriteByte(',')
			}
			eb, err := encodeValue(e, depth+1)
			if err != nil {
				return nil, fmt.Errorf("element %d: %w", i, err)
			}
			buf.Write(eb)
		}
		buf.WriteByte(']')
		tv.Value = buf.Bytes()
	default:
		return nil, fmt.Errorf("%w: Go type %T has no AMQP type", ErrBadValue, v)
	}
	if tv.Value == nil {
		b, err := json.Marshal(raw)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrBadValue, err)
		}
		tv.Value = b
	}
	return json.Marshal(tv)
}

// DecodeTable reads the typed JSON form back into the exact Go values that
// amqp091-go decodes from the wire.
func DecodeTable(data []byte) (amqp.Table, error) {
	return decodeTable(data, 0)
}

func decodeTable(data []byte, depth int) (amqp.Table, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("%w: nested deeper than %d", ErrBadValue, maxDepth)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		return nil, fmt.Errorf("%w: headers are not a JSON object of typed values", ErrBadValue)
	}
	if fields == nil {
		return nil, nil
	}
	if len(fields) > maxElements {
		return nil, fmt.Errorf("%w: table of %d entries; amqp091-go reads at most %d", ErrBadValue, len(fields), maxElements)
	}
	t := make(amqp.Table, len(fields))
	for k, raw := range fields {
		v, err := decodeValue(raw, depth+1)
		if err != nil {
			return nil, fmt.Errorf("header %q: %w", k, err)
		}
		t[k] = v
	}
	return t, nil
}

// decodeValue counts depth as encodeValue does (tables and arrays, not
// scalars), so that whatever EncodeTable writes, DecodeTable reads.
func decodeValue(data []byte, depth int) (any, error) {
	var tv typedValue
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&tv); err != nil {
		return nil, fmt.Errorf("%w: want {\"type\":…,\"value\":…}", ErrBadValue)
	}
	bad := func(err error) error {
		return fmt.Errorf("%w: %s value %s: %v", ErrBadValue, tv.Type, Truncate(string(tv.Value), 40), err)
	}
	intOf := func(bits int) (int64, error) {
		n, err := strconv.ParseInt(string(tv.Value), 10, bits)
		if err != nil {
			return 0, bad(err)
		}
		return n, nil
	}
	uintOf := func(bits int) (uint64, error) {
		n, err := strconv.ParseUint(string(tv.Value), 10, bits)
		if err != nil {
			return 0, bad(err)
		}
		return n, nil
	}
	switch tv.Type {
	case "void":
		return nil, nil
	case "bool":
		var b bool
		if err := json.Unmarshal(tv.Value, &b); err != nil {
			return nil, bad(err)
		}
		return b, nil
	case "int8":
		n, err := intOf(8)
		return int8(n), err
	case "int16":
		n, err := intOf(16)
		return int16(n), err
	case "int32":
		n, err := intOf(32)
		return int32(n), err
	case "int64":
		n, err := intOf(64)
		return n, err
	case "uint8":
		n, err := uintOf(8)
		return uint8(n), err
	case "uint16":
		n, err := uintOf(16)
		return uint16(n), err
	case "uint32":
		n, err := uintOf(32)
		return uint32(n), err
	case "float32", "float64":
		bits := 64
		if tv.Type == "float32" {
			bits = 32
		}
		s := string(tv.Value)
		var quoted string
		if json.Unmarshal(tv.Value, &quoted) == nil {
			s = quoted // NaN, +Inf, -Inf
		}
		f, err := strconv.ParseFloat(s, bits)
		if err != nil {
			return nil, bad(err)
		}
		if bits == 32 {
			return float32(f), nil
		}
		return f, nil
	case "decimal":
		var d decimalJSON
		if err := json.Unmarshal(tv.Value, &d); err != nil {
			return nil, bad(err)
		}
		return amqp.Decimal{Scale: d.Scale, Value: d.Value}, nil
	case "string":
		if tv.Base64 != "" {
			b, err := base64.StdEncoding.DecodeString(tv.Base64)
			if err != nil {
				return nil, bad(err)
			}
			return string(b), nil
		}
		var s string
		if err := json.Unmarshal(tv.Value, &s); err != nil {
			return nil, bad(err)
		}
		return s, nil
	case "bytes":
		var s string
		if err := json.Unmarshal(tv.Value, &s); err != nil {
			return nil, bad(err)
		}
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			return nil, bad(err)
		}
		return b, nil
	case "timestamp":
		if sec, err := strconv.ParseInt(string(tv.Value), 10, 64); err == nil {
			return time.Unix(sec, 0), nil // a year RFC 3339 cannot write
		}
		var s string
		if err := json.Unmarshal(tv.Value, &s); err != nil {
			return nil, bad(err)
		}
		ts, err := time.Parse(time.RFC3339, s)
		if err != nil {
			return nil, bad(err)
		}
		return time.Unix(ts.Unix(), 0), nil // as amqp091-go decodes it
	case "table":
		t, err := decodeTable(tv.Value, depth)
		if t == nil && err == nil {
			t = amqp.Table{} // "value":null; a nested table is never nil on the wire
		}
		return t, err
	case "array":
		if depth > maxDepth {
			return nil, fmt.Errorf("%w: nested deeper than %d", ErrBadValue, maxDepth)
		}
		var elems []json.RawMessage
		if err := json.Unmarshal(tv.Value, &elems); err != nil {
			return nil, bad(err)
		}
		if len(elems) == 0 {
			return []any(nil), nil // amqp091-go reads an empty array as nil
		}
		if len(elems) > maxElements {
			return nil, fmt.Errorf("%w: array of %d elements; amqp091-go reads at most %d", ErrBadValue, len(elems), maxElements)
		}
		out := make([]any, len(elems))
		for i, e := range elems {
			v, err := decodeValue(e, depth+1)
			if err != nil {
				return nil, fmt.Errorf("element %d: %w", i, err)
			}
			out[i] = v
		}
		return out, nil
	}
	return nil, fmt.Errorf("%w: unknown type %q", ErrBadValue, tv.Type)
}

// Truncate keeps an error that quotes an input on one readable line: at
// most n bytes of s, cut at a character's start, and "…" when cut.
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// NonFinite returns the path of the first NaN or ±Inf float in a header
// table ("retry.backoff[2]"), or "" when there is none. RabbitMQ refuses
// such a value by closing the publishing connection (541 on 3.10.8), so
// whatever publishes a hand-made message checks first.
func NonFinite(t amqp.Table) string {
	keys := make([]string, 0, len(t))
	for k := range t {
		keys = append(keys, k)
	}
	sort.Strings(keys) // the first by name, so the answer is stable
	for _, k := range keys {
		if p := nonFiniteIn(t[k], k); p != "" {
			return p
		}
	}
	return ""
}

func nonFiniteIn(v any, path string) string {
	switch x := v.(type) {
	case float32:
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return path
		}
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return path
		}
	case amqp.Table:
		if p := NonFinite(x); p != "" {
			return path + "." + p
		}
	case []any:
		for i, e := range x {
			if p := nonFiniteIn(e, fmt.Sprintf("%s[%d]", path, i)); p != "" {
				return p
			}
		}
	}
	return ""
}

// Plain rebuilds a header value for code that wants plain Go values:
// tables (and maps) as map[string]any, arrays as []any, every other value
// through leaf. Nesting deeper than amqp091-go can read becomes nil.
func Plain(v any, leaf func(any) any) any {
	return plain(v, leaf, 0)
}

func plain(v any, leaf func(any) any, depth int) any {
	if depth > maxDepth {
		return nil
	}
	switch x := v.(type) {
	case amqp.Table:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = plain(e, leaf, depth+1)
		}
		return out
	case map[string]any:
		return plain(amqp.Table(x), leaf, depth)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = plain(e, leaf, depth+1)
		}
		return out
	}
	return leaf(v)
}

// IntValue reads every integer type amqp091-go decodes from a header
// (int8 … int64, uint8 … uint32) and Go's int.
func IntValue(v any) (int64, bool) {
	switch n := v.(type) {
	case int8:
		return int64(n), true
	case uint8:
		return int64(n), true
	case int16:
		return int64(n), true
	case uint16:
		return int64(n), true
	case int32:
		return int64(n), true
	case uint32:
		return int64(n), true
	case int64:
		return n, true
	case int:
		return int64(n), true
	}
	return 0, false
}

// StringValue reads a header that holds text: an AMQP string, or a byte
// array (which some clients write text as).
func StringValue(v any) (string, bool) {
	switch s := v.(type) {
	case string:
		return s, true
	case []byte:
		return string(s), true
	}
	return "", false
}
