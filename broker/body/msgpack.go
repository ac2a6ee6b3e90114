package body

import (
	"bytes"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/vmihailenco/msgpack/v5"
)

// decodeMessagePack decodes one MessagePack document that is the whole
// body into plain values (plainMessagePack).
func decodeMessagePack(b []byte) (any, error) {
	r := bytes.NewReader(b) // a ByteScanner: the decoder reads no further than it needs
	dec := msgpack.NewDecoder(r)
	// Keys of any type (a map keyed by ints is valid MessagePack);
	// plainMessagePack makes them strings.
	dec.SetMapDecoder(func(d *msgpack.Decoder) (any, error) { return d.DecodeUntypedMap() })
	v, err := dec.DecodeInterface()
	if err != nil {
		return nil, err
	}
	if r.Len() > 0 {
		return nil, fmt.Errorf("%d bytes after the document", r.Len())
	}
	return plainMessagePack(v), nil
}

// plainMessagePack makes a decoded document what a filter compares and
// JSON writes: maps keyed by strings (another key type by its text),
// every integer int (a uint64 past it stays uint64), float32 float64,
// binary that is UTF-8 a string.
func plainMessagePack(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = plainMessagePack(e)
		}
		return x
	case map[any]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[fmt.Sprint(k)] = plainMessagePack(e)
		}
		return out
	case []any:
		for i, e := range x {
			x[i] = plainMessagePack(e)
		}
		return x
	case int8:
		return int(x)
	case int16:
		return int(x)
	case int32:
		return int(x)
	case int64:
		return int(x)
	case uint8:
		return int(x)
	case uint16:
		return int(x)
	case uint32:
		return int(x)
	case uint64:
		if x <= uint64(int(^uint(0)>>1)) {
			return int(x)
		}
		return x
	case float32:
		return float64(x)
	case []byte:
		if utf8.Valid(x) {
			return string(x)
		}
		return x
	case time.Time:
		return x.UTC()
	}
	return v
}
