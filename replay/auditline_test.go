package replay

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/parkinglot/parkinglot/retrycore"
)

// encodingJSONLine is what encoding/json's Encoder writes for e: the audit
// log's format before appendAuditLine, which readers of the log rely on.
func encodingJSONLine(t testing.TB, e *AuditEntry) []byte {
	var buf bytes.Buffer
	if err := json.NewEncoder(&buf).Encode(e); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestAuditLineIsEncodingJSONsLine(t *testing.T) {
	at := time.Date(2026, 12, 7, 1, 2, 3, 456789000, time.UTC)
	full := AuditEntry{
		Time: at, User: AuditUser{OS: "oncall", AMQP: "guest"}, Action: "replay", Queue: "payments.parking",
		To: &retrycore.Destination{Exchange: "payments", RoutingKey: "payment.execute"}, File: "out.jsonl", Policy: "parkinglot-unlimited-payments.parking",
		MessageID: "m-1", ReplayID: "1b4e28ba-2fa1-11d2-883f-0016d3cca427", Run: "r-1", Result: "ok", Error: "boom",
	}
	cases := map[string]AuditEntry{
		"every field": full,
		"no optional": {Time: at, Action: "delete", MessageID: "m", Result: "ok"},
		"zero":        {},
		"local time":  {Time: at.In(time.FixedZone("CET", 3600)), Result: "ok"},
		"escapes": {Time: at, Action: "a\"b\\c", MessageID: "<script>&</script>", Result: "x\n\r\t\b\f\x00\x1f\x7f",
			Error: "bad \xff utf-8 \u2028 \u2029 é 世界 \U0001F600", To: &retrycore.Destination{RoutingKey: "\x01"}},
	}
	for name, e := range cases {
		t.Run(name, func(t *testing.T) {
			want := encodingJSONLine(t, &e)
			if got := appendAuditLine(nil, &e); !bytes.Equal(got, want) {
				t.Errorf("line\n got %s\nwant %s", got, want)
			}
		})
	}
}

func FuzzAuditLine(f *testing.F) {
	f.Add("m-1", "payments", "boom \xff <&> \u2028", int64(1765069323456789000))
	f.Add("", "", "", int64(0))
	f.Fuzz(func(t *testing.T, id, queue, text string, nanos int64) {
		e := AuditEntry{Time: time.Unix(0, nanos).UTC(), Action: text, Queue: queue, MessageID: id, ReplayID: text,
			To: &retrycore.Destination{Exchange: queue, RoutingKey: text}, Result: id, Error: text}
		want := encodingJSONLine(t, &e)
		if got := appendAuditLine(nil, &e); !bytes.Equal(got, want) {
			t.Errorf("line\n got %q\nwant %q", got, want)
		}
	})
}

// BenchmarkAuditLine is appendAuditLine against encoding/json's Encoder,
// which the audit log used before.
func BenchmarkAuditLine(b *testing.B) {
	e := AuditEntry{Time: time.Now().UTC(), User: AuditUser{OS: "oncall", AMQP: "guest"}, Action: "replay", Queue: "payments.parking",
		To: &retrycore.Destination{Exchange: "payments", RoutingKey: "payment.execute"}, MessageID: "bench-0001234",
		ReplayID: "1b4e28ba-2fa1-11d2-883f-0016d3cca427", Run: "20261207T012345-1b4e28ba", Result: "ok"}
	b.Run("append", func(b *testing.B) {
		b.ReportAllocs()
		var buf []byte
		for b.Loop() {
			buf = appendAuditLine(buf[:0], &e)
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		for b.Loop() {
			buf.Reset()
			_ = enc.Encode(&e)
		}
	})
}
