//go:build integration

package broker_test

import (
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/broker/brokertest"
)

// wireHeaders holds every AMQP field type amqp091-go writes, with edge
// values. No NaN or ±Inf: RabbitMQ closes the connection on them.
func wireHeaders() amqp.Table {
	return amqp.Table{
		"int8": int8(-128), "uint8": uint8(255), "int16": int16(-32768), "uint16": uint16(65535),
		"int32": int32(math.MinInt32), "uint32": uint32(math.MaxUint32),
		"int64-min": int64(math.MinInt64), "int64-max": int64(math.MaxInt64),
		"float32": float32(-1.5e-7), "float64": math.MaxFloat64,
		"decimal": amqp.Decimal{Scale: 4, Value: 123456789},
		"true":    true, "false": false,
		"string": "héllo \"quoted\" \x00 ✓", "empty": "",
		"bad-utf8":   "bad \xff\xfe \xc3\x28",
		"bytes":      []byte{0, 0xff, 0x80, 0x7f},
		"bytes-none": []byte{},
		"timestamp":  time.Unix(1714564800, 0),
		"ts-1969":    time.Unix(-86400, 0),
		"ts-millis":  time.Unix(1714564800123, 0), // a producer that wrote milliseconds
		"void":       nil,
		"table":      amqp.Table{"a": amqp.Table{"b": []any{int16(1), "c", amqp.Table{}}}},
		"table-none": amqp.Table{},
		"array":      []any{int8(1), "two", nil, []byte("y"), []any{uint16(3), []any{time.Unix(9, 0)}}},
		"array-none": []any(nil), // amqp091-go reads an empty array as nil
		"nested-10":  nestTables(10),
	}
}

func nestTables(n int) amqp.Table {
	v := amqp.Table{"leaf": "x"}
	for i := 1; i < n; i++ {
		v = amqp.Table{"d": v, "i": int32(i)}
	}
	return v
}

func get(t *testing.T, ch *amqp.Channel, queue string) amqp.Delivery {
	t.Helper()
	d, ok, err := ch.Get(queue, false)
	if err != nil || !ok {
		t.Fatalf("get from %s: ok=%v err=%v", queue, ok, err)
	}
	if err := d.Ack(false); err != nil {
		t.Fatal(err)
	}
	return d
}

// TestRoundTripThroughBroker: a message with every header type goes through
// a real queue, is exported to JSON, imported, published again and
// consumed: body, properties and typed headers come back identical.
func TestRoundTripThroughBroker(t *testing.T) {
	ch := brokertest.Channel(t)
	q1, q2 := brokertest.Name(t, "first"), brokertest.Name(t, "second")
	brokertest.DeclareQueue(t, ch, q1, nil)
	brokertest.DeclareQueue(t, ch, q2, nil)

	body := []byte{0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 'J', 'F', 'I', 'F', 0x00} // JPEG-like: not UTF-8
	orig := amqp.Publishing{
		Headers: wireHeaders(), ContentType: "image/jpeg", ContentEncoding: "identity",
		DeliveryMode: amqp.Persistent, Priority: 5, CorrelationId: "corr", ReplyTo: "replies",
		Expiration: "600000", MessageId: "rt-1", Timestamp: time.Unix(1714564800, 0),
		Type: "photo", UserId: "guest", AppId: "roundtrip", Body: body,
	}
	brokertest.Publish(t, ch, "", q1, orig)
	first := broker.FromDelivery(get(t, ch, q1))

	// The wire keeps every type amqp091-go wrote.
	if !reflect.DeepEqual(first.Headers, orig.Headers) {
		t.Fatalf("headers changed on the wire:\n sent %#v\n got  %#v", orig.Headers, first.Headers)
	}

	exported, err := json.Marshal(first)
	if err != nil {
		t.Fatal(err)
	}
	var imported broker.Message
	if err := json.Unmarshal(exported, &imported); err != nil {
		t.Fatal(err)
	}
	brokertest.Publish(t, ch, "", q2, imported.Publishing())
	second := broker.FromDelivery(get(t, ch, q2))

	if string(second.Body) != string(body) {
		t.Errorf("body changed: % x", second.Body)
	}
	if !reflect.DeepEqual(second.Properties, first.Properties) {
		t.Errorf("properties changed:\n %#v\n %#v", first.Properties, second.Properties)
	}
	if !reflect.DeepEqual(second.Headers, first.Headers) {
		t.Errorf("headers changed:\n %#v\n %#v", first.Headers, second.Headers)
	}
	// And the export of the second copy is the same document but for
	// where this delivery came from.
	second.RoutingKey = first.RoutingKey
	again, err := json.Marshal(second)
	if err != nil {
		t.Fatal(err)
	}
	if string(again) != string(exported) {
		t.Errorf("second export differs:\n%s\n%s", exported, again)
	}
}

// TestNestingLimitMatchesClient: the JSON form stops at 32 nested
// containers because that is where amqp091-go stops reading: the broker
// takes a deeper message, and a consumer then loses its connection.
func TestNestingLimitMatchesClient(t *testing.T) {
	ch := brokertest.Channel(t)
	q := brokertest.Name(t, "deep")
	brokertest.DeclareQueue(t, ch, q, nil)

	ok := amqp.Table{"h": nestTables(32)}
	brokertest.Publish(t, ch, "", q, amqp.Publishing{Headers: ok})
	got := broker.FromDelivery(get(t, ch, q))
	if !reflect.DeepEqual(got.Headers, ok) {
		t.Fatal("32 deep changed on the wire")
	}
	if _, err := json.Marshal(got); err != nil {
		t.Fatalf("32 deep does not export: %v", err)
	}

	tooDeep := amqp.Table{"h": nestTables(33)}
	if _, err := broker.EncodeTable(tooDeep); !errors.Is(err, broker.ErrBadValue) {
		t.Fatalf("33 deep encoded: %v", err)
	}
	brokertest.Publish(t, ch, "", q, amqp.Publishing{Headers: tooDeep})
	reader := brokertest.Channel(t)
	if _, _, err := reader.Get(q, false); err == nil {
		t.Fatal("amqp091-go read a message 33 deep; the limit in value.go can be raised")
	}
}

// TestContentIDAcrossRedelivery: a quorum queue adds x-delivery-count when
// a message is given back (by basic.reject, which every version counts; 4.3
// leaves a nack out); its content id must not change, or a browse would
// make it a different message.
func TestContentIDAcrossRedelivery(t *testing.T) {
	ch := brokertest.Channel(t)
	q := brokertest.Name(t, "quorum")
	brokertest.DeclareQueue(t, ch, q, amqp.Table{"x-queue-type": "quorum"})
	brokertest.Publish(t, ch, "", q, amqp.Publishing{
		Headers: amqp.Table{"x-last-error": "boom", "x-retry-count": int32(3)},
		Body:    []byte(`{"order":42}`),
	})

	var ids []string
	var counts []any
	for i := 0; i < 3; i++ {
		d, ok, err := ch.Get(q, false)
		if err != nil || !ok {
			t.Fatalf("get %d: ok=%v err=%v", i, ok, err)
		}
		m := broker.FromDelivery(d)
		ids = append(ids, m.ID())
		counts = append(counts, m.Headers["x-delivery-count"])
		if err := d.Reject(true); err != nil {
			t.Fatal(err)
		}
	}
	if counts[2] == nil {
		t.Fatalf("the broker added no x-delivery-count (%v); the test proves nothing", counts)
	}
	for i, id := range ids {
		if id != ids[0] {
			t.Errorf("delivery %d (x-delivery-count %v) has id %s, first had %s", i, counts[i], id, ids[0])
		}
	}
	if other := broker.ContentID([]byte(`{"order":43}`), amqp.Table{"x-last-error": "boom", "x-retry-count": int32(3)}); other == ids[0] {
		t.Error("a different body has the same content id")
	}
}
