package broker

import (
	"errors"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// TestSpoolRecordCorruptionIsAnError: every truncation of a record, and
// every single-byte change of it, decodes to an error or a message — never
// a panic or an allocation the record's size does not justify.
func TestSpoolRecordCorruptionIsAnError(t *testing.T) {
	m := Message{
		Properties: Properties{MessageID: "id", ContentType: "application/json", Timestamp: time.Unix(5, 0)},
		Headers: amqp.Table{"a": []any{int8(1), "two", amqp.Table{"t": time.Unix(9, 0)}}, "d": amqp.Decimal{Scale: 2, Value: 5},
			"f": 1.5, "b": []byte{1, 2}, "v": nil, "ok": true},
		Body: []byte(`{"x":1}`),
	}
	rec, err := appendRecord(nil, m)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := decodeRecord(rec); err != nil {
		t.Fatalf("the record itself: %v", err)
	}
	for n := 0; n < len(rec); n++ {
		if _, err := decodeRecord(rec[:n]); !errors.Is(err, errSpoolRecord) {
			t.Fatalf("truncated to %d of %d bytes: err = %v", n, len(rec), err)
		}
	}
	for i := range rec {
		for _, b := range []byte{0, 0x7f, 0x80, 0xff} {
			bad := append([]byte(nil), rec...)
			bad[i] = b
			_, _ = decodeRecord(bad) // must not panic
		}
	}
}
