package broker

import (
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// everyType holds one value of each Go type amqp091-go decodes from the
// wire, edge values included. Timestamps are built as amqp091-go builds
// them (time.Unix(sec, 0), local zone), so DeepEqual also checks location.
func everyType() amqp.Table {
	return amqp.Table{
		"int8":         int8(-128),
		"uint8":        uint8(255),
		"int16":        int16(-32768),
		"uint16":       uint16(65535),
		"int32":        int32(math.MinInt32),
		"uint32":       uint32(math.MaxUint32),
		"int64-min":    int64(math.MinInt64),
		"int64-max":    int64(math.MaxInt64),
		"float32":      float32(3.1415927),
		"float32-tiny": float32(math.SmallestNonzeroFloat32),
		"float32-max":  float32(math.MaxFloat32),
		"float64":      math.Pi,
		"float64-tiny": math.SmallestNonzeroFloat64,
		"float64-max":  math.MaxFloat64,
		"decimal":      amqp.Decimal{Scale: 255, Value: math.MinInt32},
		"true":         true,
		"false":        false,
		"string":       "héllo \"wörld\" <&> \u2028 \x00 ✓",
		"string-empty": "",
		"bad-utf8":     "bad \xff\xfe \xc3\x28",
		"bytes":        []byte{0, 0xff, 0x80},
		"bytes-empty":  []byte{},
		"timestamp":    time.Unix(1714564800, 0),
		"ts-1969":      time.Unix(-1, 0),
		"ts-far":       time.Unix(1714564800000, 0), // milliseconds written as seconds
		"ts-ancient":   time.Unix(-70000000000, 0),  // before year 0
		"void":         nil,
		"table-empty":  amqp.Table{},
		"array-empty":  []any(nil), // amqp091-go reads an empty array as nil
		"array":        []any{int8(1), "two", nil, amqp.Table{"x": []byte("y")}, []any{uint16(3)}, time.Unix(9, 0)},
		"table":        amqp.Table{"inner": amqp.Table{"deeper": int64(-1)}},
	}
}

func TestEncodeDecodeTableEveryType(t *testing.T) {
	for name, v := range everyType() {
		t.Run(name, func(t *testing.T) {
			in := amqp.Table{name: v}
			enc, err := EncodeTable(in)
			if err != nil {
				t.Fatalf("encode: %v", err)
			}
			out, err := DecodeTable(enc)
			if err != nil {
				t.Fatalf("decode %s: %v", enc, err)
			}
			if !reflect.DeepEqual(in, out) {
				t.Fatalf("round trip changed the value:\n in  %#v\n out %#v\n json %s", in, out, enc)
			}
			if got, want := TypeName(out[name]), TypeName(v); got != want {
				t.Fatalf("type %s became %s", want, got)
			}
		})
	}
}

func TestEncodeTableWholeTable(t *testing.T) {
	in := everyType()
	enc, err := EncodeTable(in)
	if err != nil {
		t.Fatal(err)
	}
	out, err := DecodeTable(enc)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(in, out) {
		t.Fatalf("round trip changed the table:\n in  %#v\n out %#v", in, out)
	}
	// Encoding is deterministic (keys sorted), so content ids are stable.
	again, _ := EncodeTable(out)
	if string(again) != string(enc) {
		t.Fatalf("second encoding differs:\n%s\n%s", enc, again)
	}
}

// TestEncodeDecodeNonFinite: RabbitMQ itself refuses NaN and ±Inf headers
// (541 on 3.10.8), but a hand-made export may hold them; they survive as
// text. DeepEqual cannot compare NaN, so bits are compared.
func TestEncodeDecodeNonFinite(t *testing.T) {
	cases := []struct {
		name string
		v    any
	}{
		{"float64 NaN", math.NaN()},
		{"float64 +Inf", math.Inf(1)},
		{"float64 -Inf", math.Inf(-1)},
		{"float32 NaN", float32(math.NaN())},
		{"float32 +Inf", float32(math.Inf(1))},
		{"float32 -Inf", float32(math.Inf(-1))},
		{"float64 -0", math.Copysign(0, -1)},
		{"float32 -0", float32(math.Copysign(0, -1))},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			enc, err := EncodeTable(amqp.Table{"f": c.v})
			if err != nil {
				t.Fatal(err)
			}
			out, err := DecodeTable(enc)
			if err != nil {
				t.Fatalf("decode %s: %v", enc, err)
			}
			switch want := c.v.(type) {
			case float64:
				got, ok := out["f"].(float64)
				if !ok || math.Float64bits(got) != math.Float64bits(want) {
					t.Fatalf("got %#v from %s, want %v", out["f"], enc, want)
				}
			case float32:
				got, ok := out["f"].(float32)
				if !ok || math.Float32bits(got) != math.Float32bits(want) {
					t.Fatalf("got %#v from %s, want %v", out["f"], enc, want)
				}
			}
		})
	}
}

func TestEncodeInvalidUTF8StringAsBase64(t *testing.T) {
	enc, err := EncodeTable(amqp.Table{"s": "a\xffb"})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"s":{"type":"string","base64":"Yf9i"}}`; string(enc) != want {
		t.Fatalf("got %s, want %s", enc, want)
	}
	if !json.Valid(enc) {
		t.Fatal("not valid JSON")
	}
}

// TestEncodeWireForm pins the JSON form other tools read.
func TestEncodeWireForm(t *testing.T) {
	cases := []struct {
		v    any
		want string
	}{
		{int32(3), `{"type":"int32","value":3}`},
		{3, `{"type":"int32","value":3}`}, // Go int is written as int32
		{uint8(7), `{"type":"uint8","value":7}`},
		{"x", `{"type":"string","value":"x"}`},
		{[]byte("hi"), `{"type":"bytes","value":"aGk="}`},
		{nil, `{"type":"void"}`},
		{true, `{"type":"bool","value":true}`},
		{math.NaN(), `{"type":"float64","value":"NaN"}`},
		{math.Inf(-1), `{"type":"float64","value":"-Inf"}`},
		{amqp.Decimal{Scale: 2, Value: 150}, `{"type":"decimal","value":{"scale":2,"value":150}}`},
		{time.Unix(0, 0), `{"type":"timestamp","value":"1970-01-01T00:00:00Z"}`},
		{time.Unix(253402300800, 0), `{"type":"timestamp","value":253402300800}`}, // year 10000
		{[]any{}, `{"type":"array","value":[]}`},
		{amqp.Table{}, `{"type":"table","value":{}}`},
		{map[string]any{"a": int8(1)}, `{"type":"table","value":{"a":{"type":"int8","value":1}}}`},
	}
	for _, c := range cases {
		enc, err := EncodeTable(amqp.Table{"k": c.v})
		if err != nil {
			t.Fatalf("%#v: %v", c.v, err)
		}
		if want := `{"k":` + c.want + `}`; string(enc) != want {
			t.Errorf("%#v: got %s, want %s", c.v, enc, want)
		}
	}
}

func TestDecodeAcceptsEquivalentForms(t *testing.T) {
	cases := []struct {
		in   string
		want any
	}{
		{`{"type":"float64","value":"1.5"}`, 1.5}, // quoted numbers
		{`{"type":"timestamp","value":"2024-05-01T14:00:00+02:00"}`, time.Unix(1714564800, 0)},
		{`{"type":"timestamp","value":"2024-05-01T12:00:00.999Z"}`, time.Unix(1714564800, 0)}, // AMQP has whole seconds
		{`{"type":"timestamp","value":1714564800}`, time.Unix(1714564800, 0)},
		{`{"type":"table","value":null}`, amqp.Table{}},
		{`{"type":"array","value":null}`, []any(nil)},
		{`{"type":"void","value":5}`, nil},
		{`{"type":"string","base64":"aGk="}`, "hi"},
	}
	for _, c := range cases {
		out, err := DecodeTable([]byte(`{"k":` + c.in + `}`))
		if err != nil {
			t.Errorf("%s: %v", c.in, err)
			continue
		}
		if !reflect.DeepEqual(out["k"], c.want) {
			t.Errorf("%s: got %#v, want %#v", c.in, out["k"], c.want)
		}
	}
}

func TestDecodeTableErrors(t *testing.T) {
	cases := []struct {
		name, in, want string
	}{
		{"not an object", `[1]`, "not a JSON object"},
		{"untyped value", `{"k":5}`, `header "k"`},
		{"unknown type", `{"k":{"type":"uint64","value":1}}`, `unknown type "uint64"`},
		{"unknown field", `{"k":{"type":"int8","value":1,"extra":2}}`, `want {"type"`},
		{"int8 overflow", `{"k":{"type":"int8","value":128}}`, "int8 value 128"},
		{"uint8 negative", `{"k":{"type":"uint8","value":-1}}`, "uint8 value -1"},
		{"int32 fraction", `{"k":{"type":"int32","value":1.5}}`, "int32 value 1.5"},
		{"uint32 overflow", `{"k":{"type":"uint32","value":4294967296}}`, "uint32 value"},
		{"float32 overflow", `{"k":{"type":"float32","value":1e39}}`, "float32 value 1e39"},
		{"bool as text", `{"k":{"type":"bool","value":"true"}}`, "bool value"},
		{"bytes not base64", `{"k":{"type":"bytes","value":"!!"}}`, "bytes value"},
		{"string base64 bad", `{"k":{"type":"string","base64":"!!"}}`, "string value"},
		{"timestamp not a time", `{"k":{"type":"timestamp","value":"yesterday"}}`, "timestamp value"},
		{"decimal scale", `{"k":{"type":"decimal","value":{"scale":256,"value":1}}}`, "decimal value"},
		{"missing value", `{"k":{"type":"int64"}}`, "int64 value"},
		{"nested bad", `{"k":{"type":"array","value":[{"type":"int8","value":1},{"type":"x"}]}}`, "element 1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := DecodeTable([]byte(c.in))
			if err == nil {
				t.Fatalf("no error for %s", c.in)
			}
			if !errors.Is(err, ErrBadValue) {
				t.Errorf("error %v does not wrap ErrBadValue", err)
			}
			if !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("error %q: want one line containing %q", err, c.want)
			}
		})
	}
}

func TestEncodeTableErrors(t *testing.T) {
	cases := []struct {
		name string
		t    amqp.Table
		want string
	}{
		{"uint64", amqp.Table{"k": uint64(1)}, "uint64 has no AMQP type"},
		{"[]string", amqp.Table{"k": []string{"a"}}, "[]string has no AMQP type"},
		{"struct in array", amqp.Table{"k": []any{struct{}{}}}, "element 0"},
		{"int beyond int32", amqp.Table{"k": 1 << 40}, "does not fit the int32"},
		{"header name not UTF-8", amqp.Table{"k\xff": "v"}, "not valid UTF-8"},
		{"nested name not UTF-8", amqp.Table{"t": amqp.Table{"\xc3\x28": 1}}, "not valid UTF-8"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := EncodeTable(c.t)
			if err == nil || !errors.Is(err, ErrBadValue) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want ErrBadValue containing %q", err, c.want)
			}
		})
	}
}

// nestTables returns a header table whose "h" holds n tables nested inside
// each other.
func nestTables(n int) amqp.Table {
	v := amqp.Table{"leaf": "x"}
	for i := 1; i < n; i++ {
		v = amqp.Table{"d": v}
	}
	return amqp.Table{"h": v}
}

func nestArrays(n int) amqp.Table {
	v := []any{"leaf"}
	for i := 1; i < n; i++ {
		v = []any{v}
	}
	return amqp.Table{"h": v}
}

// TestNestingLimit: amqp091-go reads 32 nested containers below the header
// table and fails the connection beyond (roundtrip_test proves it on the
// broker), so the JSON form stops at the same depth, with an error rather
// than a stack overflow however deep the input is.
func TestNestingLimit(t *testing.T) {
	for _, c := range []struct {
		name string
		mk   func(int) amqp.Table
	}{{"tables", nestTables}, {"arrays", nestArrays}} {
		t.Run(c.name, func(t *testing.T) {
			ok := c.mk(maxDepth)
			enc, err := EncodeTable(ok)
			if err != nil {
				t.Fatalf("%d deep: %v", maxDepth, err)
			}
			if out, err := DecodeTable(enc); err != nil || !reflect.DeepEqual(out, ok) {
				t.Fatalf("%d deep: decode %v", maxDepth, err)
			}
			if _, err := EncodeTable(c.mk(maxDepth + 1)); err == nil || !strings.Contains(err.Error(), "nested deeper than 32") {
				t.Fatalf("%d deep encoded: %v", maxDepth+1, err)
			}
		})
	}
	// Hand-written JSON far deeper than the limit: a clean error.
	deep := strings.Repeat(`{"type":"array","value":[`, 100000) + strings.Repeat(`]}`, 100000)
	if _, err := DecodeTable([]byte(`{"h":` + deep + `}`)); err == nil || !errors.Is(err, ErrBadValue) {
		t.Fatalf("100000 deep JSON: %v", err)
	}
	deepT := strings.Repeat(`{"type":"table","value":{"d":`, 40) + `{"type":"void"}` + strings.Repeat(`}}`, 40)
	if _, err := DecodeTable([]byte(`{"h":` + deepT + `}`)); err == nil || !strings.Contains(err.Error(), "nested deeper") {
		t.Fatalf("40 deep tables: %v", err)
	}
}

// TestContainerSizeLimit: more entries than amqp091-go reads in one
// container would make the published message unreadable.
func TestContainerSizeLimit(t *testing.T) {
	elem := `{"type":"void"}`
	arr := func(n int) string {
		return `{"a":{"type":"array","value":[` + strings.TrimSuffix(strings.Repeat(elem+",", n), ",") + `]}}`
	}
	if out, err := DecodeTable([]byte(arr(maxElements))); err != nil || len(out["a"].([]any)) != maxElements {
		t.Fatalf("%d elements: %v", maxElements, err)
	}
	if _, err := DecodeTable([]byte(arr(maxElements + 1))); err == nil || !strings.Contains(err.Error(), "at most 8192") {
		t.Fatalf("%d elements: %v", maxElements+1, err)
	}
}

func TestTypeName(t *testing.T) {
	for _, c := range []struct {
		v    any
		want string
	}{
		{nil, "void"}, {int8(1), "int8"}, {uint8(1), "uint8"}, {int16(1), "int16"}, {uint16(1), "uint16"},
		{int32(1), "int32"}, {1, "int32"}, {uint32(1), "uint32"}, {int64(1), "int64"},
		{float32(1), "float32"}, {1.0, "float64"}, {amqp.Decimal{}, "decimal"}, {true, "bool"},
		{"s", "string"}, {[]byte{}, "bytes"}, {time.Time{}, "timestamp"},
		{amqp.Table{}, "table"}, {map[string]any{}, "table"}, {[]any{}, "array"}, {uint64(1), "uint64"},
	} {
		if got := TypeName(c.v); got != c.want {
			t.Errorf("TypeName(%#v) = %s, want %s", c.v, got, c.want)
		}
	}
}

func TestCloneTableIsDeep(t *testing.T) {
	in := amqp.Table{"t": amqp.Table{"b": []byte("x")}, "a": []any{[]byte("y"), amqp.Table{"n": int8(1)}}}
	c := CloneTable(in)
	if !reflect.DeepEqual(in, c) {
		t.Fatal("clone differs")
	}
	c["t"].(amqp.Table)["b"].([]byte)[0] = 'Z'
	c["a"].([]any)[1].(amqp.Table)["n"] = int8(2)
	if in["t"].(amqp.Table)["b"].([]byte)[0] != 'x' || in["a"].([]any)[1].(amqp.Table)["n"] != int8(1) {
		t.Fatal("changing the clone changed the original")
	}
}

func TestNonFiniteNamesThePath(t *testing.T) {
	cases := []struct {
		h    amqp.Table
		want string
	}{
		{amqp.Table{"a": 1.5, "b": "NaN"}, ""},
		{amqp.Table{"f": math.NaN()}, "f"},
		{amqp.Table{"z": math.Inf(1), "a": float32(math.Inf(-1))}, "a"},
		{amqp.Table{"t": amqp.Table{"u": []any{1.0, amqp.Table{"v": math.NaN()}}}}, "t.u[1].v"},
		{nil, ""},
	}
	for _, c := range cases {
		if got := NonFinite(c.h); got != c.want {
			t.Errorf("NonFinite(%v) = %q, want %q", c.h, got, c.want)
		}
	}
}

// TestTruncateCutsAtACharacter: an error quoting a long input keeps at most
// n bytes of it, never half a character.
func TestTruncateCutsAtACharacter(t *testing.T) {
	for _, c := range []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"abcdef", 3, "abc…"},
		{"aéé", 2, "a…"}, // the second byte is inside "é"
		{"ééé", 4, "éé…"},
	} {
		if got := Truncate(c.in, c.n); got != c.want {
			t.Errorf("Truncate(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
	}
}
