package body

import (
	"encoding/json"
	"math"
	"strconv"

	"github.com/parkinglot/parkinglot/broker"
)

// Of reads a message's body by its properties and headers alone.
func Of(m broker.Message) Decoded { return (*Reader)(nil).Read("", m) }

// Text is the body as text a search matches: what a MessagePack document
// holds written as JSON, else the bytes with their compression undone.
func (d Decoded) Text() string {
	if d.Format == MessagePack {
		if b, err := json.Marshal(JSONValue(d.Value)); err == nil {
			return string(b)
		}
	}
	return string(d.Bytes)
}

// JSONValue is a decoded document as encoding/json writes it: NaN and the
// infinities, which JSON cannot hold, become their names as strings.
func JSONValue(v any) any { return jsonSafe(v) }

// jsonSafe: see JSONValue.
func jsonSafe(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = jsonSafe(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = jsonSafe(e)
		}
		return out
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return strconv.FormatFloat(x, 'g', -1, 64)
		}
	}
	return v
}
