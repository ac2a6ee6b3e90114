package broker

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"
)

// FuzzMessageJSON: Message.UnmarshalJSON must never panic, and whatever it
// accepts must marshal and unmarshal again to the same message (and the
// same bytes), or an export → import cycle would drift.
func FuzzMessageJSON(f *testing.F) {
	for _, raw := range recordedMessages(f) {
		// Compact: the fuzzer minimises every new input, and that time
		// grows with its size.
		var b bytes.Buffer
		if err := json.Compact(&b, raw); err != nil {
			f.Fatal(err)
		}
		f.Add(b.Bytes())
	}
	for _, m := range []Message{fullMessage(), {}, {Headers: amqp.Table{}}, {Body: []byte{0xff}}} {
		data, err := json.Marshal(m)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	// Hand-written edge cases live in testdata/fuzz/FuzzMessageJSON.
	f.Fuzz(func(t *testing.T, data []byte) {
		var m Message
		if err := m.UnmarshalJSON(data); err != nil {
			return
		}
		out, err := json.Marshal(m)
		if err != nil {
			t.Fatalf("accepted %q but cannot marshal it: %v", data, err)
		}
		var back Message
		if err := json.Unmarshal(out, &back); err != nil {
			t.Fatalf("cannot read back its own output %s: %v", out, err)
		}
		if !equalMessages(m, back) {
			t.Fatalf("round trip changed the message:\n %#v\n %#v\n json %s", m, back, out)
		}
		again, err := json.Marshal(back)
		if err != nil || string(again) != string(out) {
			t.Fatalf("second marshal differs (%v):\n%s\n%s", err, out, again)
		}
	})
}

// equalMessages is reflect.DeepEqual except that NaN equals NaN of the
// same bits (the JSON form carries NaN as text).
func equalMessages(a, b Message) bool {
	ha, hb := a.Headers, b.Headers
	a.Headers, b.Headers = nil, nil
	return reflect.DeepEqual(a, b) && equalValues(ha, hb)
}

func equalValues(a, b any) bool {
	switch x := a.(type) {
	case float64:
		y, ok := b.(float64)
		return ok && (x == y || (x != x && y != y))
	case float32:
		y, ok := b.(float32)
		return ok && (x == y || (x != x && y != y))
	case amqp.Table:
		y, ok := b.(amqp.Table)
		if !ok || len(x) != len(y) || (x == nil) != (y == nil) {
			return false
		}
		for k, v := range x {
			w, present := y[k]
			if !present || !equalValues(v, w) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) || (x == nil) != (y == nil) {
			return false
		}
		for i := range x {
			if !equalValues(x[i], y[i]) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(a, b)
}
