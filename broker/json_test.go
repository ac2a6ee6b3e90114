package broker

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// recordedDir holds the deliveries recorded from the real broker
// (retrycore's TestRecord writes them).
const recordedDir = "../testdata/recorded"

// recordedMessages returns the "message" of every recording by scenario.
func recordedMessages(t testing.TB) map[string]json.RawMessage {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(recordedDir, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no recordings in %s: %v", recordedDir, err)
	}
	out := map[string]json.RawMessage{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var r struct {
			Message json.RawMessage `json:"message"`
		}
		if err := json.Unmarshal(data, &r); err != nil || len(r.Message) == 0 {
			t.Fatalf("%s: no message (%v)", f, err)
		}
		out[strings.TrimSuffix(filepath.Base(f), ".json")] = r.Message
	}
	return out
}

// roundTrip marshals and unmarshals m.
func roundTrip(t *testing.T, m Message) (Message, []byte) {
	t.Helper()
	data, err := json.Marshal(m)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	var back Message
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatalf("unmarshal %s: %v", Truncate(string(data), 200), err)
	}
	return back, data
}

// fullMessage has every property and header type, as a delivery would.
func fullMessage() Message {
	return Message{
		Properties: Properties{
			ContentType: "application/json", ContentEncoding: "gzip", DeliveryMode: 2, Priority: 9,
			CorrelationID: "c-1", ReplyTo: "replies", Expiration: "60000", MessageID: "m-1",
			Timestamp: time.Unix(1714564800, 0), Type: "order.created", UserID: "guest", AppID: "shop",
		},
		Headers:     everyType(),
		Body:        []byte(`{"ok":true}`),
		Exchange:    "orders",
		RoutingKey:  "order.created",
		Redelivered: true,
	}
}

func TestMessageJSONRoundTrip(t *testing.T) {
	binary := []byte{0xff, 0xfe, 0x00, 0x80, 'a'}
	// 16 MiB (the largest message a default RabbitMQ accepts is 128 MiB;
	// parkinglot's exports must not choke far below that), text ending in
	// one byte that is not UTF-8, so it travels as base64.
	bigBinary := append(bytes.Repeat([]byte("0123456789abcdef"), 1<<20), 0xff)
	cases := []struct {
		name     string
		m        Message
		encoding string
	}{
		{"every property and header type", fullMessage(), "utf8"},
		{"no headers", Message{Body: []byte("x")}, "utf8"},
		{"empty headers table", Message{Headers: amqp.Table{}, Body: []byte("x")}, "utf8"},
		{"empty body", Message{Body: []byte{}}, "utf8"},
		{"binary body", Message{Body: binary}, "base64"},
		{"text body with NUL and escapes", Message{Body: []byte("a\x00<b>&\u2028\"")}, "utf8"},
		{"16 MiB binary body", Message{Body: bigBinary}, "base64"},
		{"timestamp year 50000", Message{Properties: Properties{Timestamp: time.Unix(1714564800000, 0)}, Body: []byte{}}, "utf8"},
		{"timestamp before 1970", Message{Properties: Properties{Timestamp: time.Unix(-5, 0)}, Body: []byte{}}, "utf8"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			back, data := roundTrip(t, c.m)
			want := c.m
			want.DeliveryTag = 0 // a fact of one delivery, not exported
			if !reflect.DeepEqual(back, want) {
				t.Fatalf("round trip changed the message:\n in  %#v\n out %#v", want, back)
			}
			if want := `"body_encoding":"` + c.encoding + `"`; !bytes.Contains(data, []byte(want)) {
				t.Fatalf("%s lacks %s", Truncate(string(data), 300), want)
			}
		})
	}
}

// TestMessageJSONTimestampLocation: amqp091-go decodes the timestamp
// property as time.Unix(sec, 0); the JSON form must give back that value,
// not a UTC or fixed-zone time that prints the same but is not DeepEqual.
func TestMessageJSONTimestampLocation(t *testing.T) {
	for _, tz := range []*time.Location{time.UTC, time.FixedZone("X", 5*3600+1800)} {
		m := Message{Properties: Properties{Timestamp: time.Unix(1714564800, 0).In(tz)}}
		back, _ := roundTrip(t, m)
		if want := time.Unix(1714564800, 0); !reflect.DeepEqual(back.Properties.Timestamp, want) {
			t.Fatalf("%s: got %#v, want %#v", tz, back.Properties.Timestamp, want)
		}
	}
}

func TestMessageJSONHeadersNullVersusEmpty(t *testing.T) {
	for _, c := range []struct {
		h    amqp.Table
		want string
	}{{nil, `"headers":null`}, {amqp.Table{}, `"headers":{}`}} {
		data, err := json.Marshal(Message{Headers: c.h})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(data), c.want) {
			t.Errorf("headers %#v: %s lacks %s", c.h, data, c.want)
		}
	}
}

func TestMessageJSONRefusesWhatItCannotCarry(t *testing.T) {
	cases := []struct {
		name string
		m    Message
		want string
	}{
		{"header name not UTF-8", Message{Headers: amqp.Table{"k\xff": "v"}}, `header name "k\xff" is not valid UTF-8`},
		{"message_id not UTF-8", Message{Properties: Properties{MessageID: "id\xff"}}, `message_id "id\xff" is not valid UTF-8`},
		{"routing key not UTF-8", Message{RoutingKey: "rk\xfe"}, "routing_key"},
		{"uint64 header", Message{Headers: amqp.Table{"n": uint64(1)}}, "uint64 has no AMQP type"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := json.Marshal(c.m)
			if err == nil || !errors.Is(err, ErrBadValue) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want ErrBadValue containing %q", err, c.want)
			}
		})
	}
}

func TestMessageUnmarshalErrors(t *testing.T) {
	cases := []struct {
		name, in, want string
	}{
		{"not JSON", `{"id":`, "not a parkinglot message"},
		{"array", `[1,2]`, "not a parkinglot message"},
		{"bad base64 body", `{"body_encoding":"base64","body":"!!"}`, "body: bad base64"},
		{"unknown body encoding", `{"body_encoding":"hex","body":"00"}`, `body_encoding "hex"`},
		{"untyped headers", `{"headers":{"a":1}}`, `header "a"`},
		{"bad timestamp", `{"properties":{"timestamp":"noon"}}`, "timestamp"},
		{"delivery mode out of range", `{"properties":{"delivery_mode":300}}`, "not a parkinglot message"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var m Message
			err := m.UnmarshalJSON([]byte(c.in))
			if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("got %v, want one line containing %q", err, c.want)
			}
		})
	}
}

// TestRecordedMessagesRoundTrip: every delivery recorded from the real broker
// reads, writes back byte-identical (compact) and reads again identically.
func TestRecordedMessagesRoundTrip(t *testing.T) {
	for name, raw := range recordedMessages(t) {
		t.Run(name, func(t *testing.T) {
			var m Message
			if err := json.Unmarshal(raw, &m); err != nil {
				t.Fatal(err)
			}
			back, data := roundTrip(t, m)
			if !reflect.DeepEqual(back, m) {
				t.Fatalf("second round trip differs:\n %#v\n %#v", m, back)
			}
			var compact bytes.Buffer
			if err := json.Compact(&compact, raw); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(compact.Bytes(), data) {
				t.Fatalf("re-encoded form differs from the recording:\n%s\n%s", compact.Bytes(), data)
			}
		})
	}
}

func TestRecordedAllTypesDecodesToWireTypes(t *testing.T) {
	var m Message
	if err := json.Unmarshal(recordedMessages(t)["all-types"], &m); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"int8": int8(-128), "uint8": uint8(255), "int16": int16(-32768), "uint16": uint16(65535),
		"int32": int32(-2147483648), "uint32": uint32(4294967295), "int64-max": int64(9223372036854775807),
		"float32": float32(3.1415927), "decimal": amqp.Decimal{Scale: 2, Value: -12345},
		"bytes": []byte{0, 0xff, 0x80, 0x7f, 'A'}, "timestamp": time.Unix(1714564800, 0), "void": nil,
		"string-invalid-utf8": "bad \xff\xfe bytes \xc3\x28", "array-empty": []any(nil), "table-empty": amqp.Table{},
	}
	for k, v := range want {
		if !reflect.DeepEqual(m.Headers[k], v) {
			t.Errorf("%s = %#v, want %#v", k, m.Headers[k], v)
		}
	}
	if m.Body[0] != 0xff || len(m.Body) != 256+len("\xc3\x28 invalid sequence, then text") {
		t.Errorf("body not the recorded binary body: % x…", m.Body[:4])
	}
	depth := 0
	for v := any(m.Headers["nested-10"]); v != nil; depth++ {
		switch x := v.(type) {
		case amqp.Table:
			v = x["down"]
		case []any:
			v = x[0]
		default:
			v = nil
		}
	}
	if depth < 10 {
		t.Errorf("nested-10 is %d deep", depth)
	}
}
