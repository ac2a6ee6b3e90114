package retrycore

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker"
)

// FuzzDecode: whatever the headers hold, decoding, origin resolution and
// grouping never panic, and their answers keep their promises (one-line
// error text within MaxErrorLen, a refusal that is exactly
// ErrUnknownOrigin, the same origin from the headers and from their
// decoded facts). The input is either the typed JSON form of a header
// table (seeded from the recordings, so mutations stay close to real
// x-death) or raw bytes turned into a table by tableFromBytes, which
// reaches shapes the JSON decoder would reject.
func FuzzDecode(f *testing.F) {
	for _, name := range recordedNames(f) {
		enc, err := broker.EncodeTable(loadRecording(f, name).Message.Headers)
		if err != nil {
			f.Fatal(err)
		}
		var b bytes.Buffer
		if err := json.Compact(&b, enc); err != nil {
			f.Fatal(err)
		}
		f.Add(b.Bytes())
	}
	// Hand-made shapes live in testdata/fuzz/FuzzDecode.
	f.Fuzz(func(t *testing.T, data []byte) {
		h, err := broker.DecodeTable(data)
		if err != nil {
			h = tableFromBytes(data)
		}
		facts := Decode(h)
		if len(facts.Error) > MaxErrorLen || strings.ContainsAny(facts.Error, "\r\n") || !utf8.ValidString(facts.Error) {
			t.Fatalf("error text is not one valid line within %d bytes: %q", MaxErrorLen, facts.Error)
		}
		if facts.Attempts < 0 {
			t.Fatalf("negative attempts %d", facts.Attempts)
		}
		if got := AttemptsOf(h); got != facts.Attempts {
			t.Fatalf("AttemptsOf %d, Decode %d", got, facts.Attempts)
		}
		if len(facts.Deaths) > maxDeaths {
			t.Fatalf("%d deaths decoded", len(facts.Deaths))
		}
		_ = GroupKey(facts.Error)
		for _, q := range []OriginQuery{{ParkingLot: "orders_error"}, {ParkingLot: "pl", Queues: fuzzQueues(data)}} {
			o, err := ResolveOrigin(context.Background(), h, q)
			if err != nil && !errors.Is(err, ErrUnknownOrigin) && q.Queues == nil {
				t.Fatalf("error %v without a management API to fail", err)
			}
			if err == nil && o.Source == "" {
				t.Fatalf("origin %+v without a source", o)
			}
			if o2, err2 := ResolveOriginOf(context.Background(), h, facts, q); o2 != o || (err2 == nil) != (err == nil) {
				t.Fatalf("from the decoded facts: %+v, %v; from the headers: %+v, %v", o2, err2, o, err)
			}
		}
	})
}

// fuzzQueues answers every queue with arguments built from the input.
type fuzzQueues []byte

func (f fuzzQueues) QueueArguments(context.Context, string) (amqp.Table, error) {
	return tableFromBytes([]byte(f)), nil
}

// fuzzKeys are the names decoding looks at; the generator mostly picks
// them so that the values land where they matter.
var fuzzKeys = []string{
	HeaderDeath, HeaderRetryCount, HeaderLastError, HeaderOriginalExchange, HeaderOriginalRoutingKey,
	HeaderOriginalQueue, HeaderFirstDeathQueue, HeaderFirstDeathReason, HeaderFirstDeathExchange,
	HeaderLastDeathQueue, HeaderDeliveryCount, HeaderParkedAt, HeaderFirstFailedAt, HeaderFailureKind,
	HeaderReplayCount, HeaderReplayedAt, HeaderReplayID, "x-original-routingKey", "x-exception-message",
	"MT-Fault-Message", "MT-Fault-InputAddress", "MT-Fault-Timestamp", "NServiceBus.FailedQ",
	"rbs2-source-queue", "count", "queue", "reason", "exchange", "routing-keys", "time",
	"x-dead-letter-exchange", "x-dead-letter-routing-key",
}

// tableFromBytes builds a header table from raw bytes: each value's type is
// chosen by a byte, containers nest, and strings are taken from the input
// whatever their encoding.
func tableFromBytes(data []byte) amqp.Table {
	g := &gen{data: data}
	return g.table(0)
}

type gen struct {
	data []byte
	pos  int
}

func (g *gen) byte() byte {
	if g.pos >= len(g.data) {
		return 0
	}
	b := g.data[g.pos]
	g.pos++
	return b
}

func (g *gen) bytes(n int) []byte {
	if g.pos+n > len(g.data) {
		n = len(g.data) - g.pos
	}
	b := g.data[g.pos : g.pos+n]
	g.pos += n
	return b
}

func (g *gen) u64() uint64 {
	var b [8]byte
	copy(b[:], g.bytes(8))
	return binary.LittleEndian.Uint64(b[:])
}

func (g *gen) str() string { return string(g.bytes(int(g.byte() % 24))) }

func (g *gen) key() string {
	if b := g.byte(); b < 200 {
		return fuzzKeys[int(b)%len(fuzzKeys)]
	}
	return g.str()
}

func (g *gen) table(depth int) amqp.Table {
	n := int(g.byte() % 8)
	t := make(amqp.Table, n)
	for i := 0; i < n && g.pos < len(g.data); i++ {
		t[g.key()] = g.value(depth + 1)
	}
	return t
}

func (g *gen) value(depth int) any {
	kind := g.byte() % 22
	if depth > 6 && kind >= 18 {
		kind = 0
	}
	switch kind {
	case 0:
		return nil
	case 1:
		return int8(g.byte())
	case 2:
		return g.byte()
	case 3:
		return int16(g.u64())
	case 4:
		return uint16(g.u64())
	case 5:
		return int32(g.u64())
	case 6:
		return uint32(g.u64())
	case 7:
		return int64(g.u64())
	case 8:
		return math.Float64frombits(g.u64())
	case 9:
		return math.Float32frombits(uint32(g.u64()))
	case 10:
		return amqp.Decimal{Scale: g.byte(), Value: int32(g.u64())}
	case 11:
		return g.byte()%2 == 0
	case 12, 13:
		return g.str()
	case 14:
		return []byte(g.str())
	case 15:
		return time.Unix(int64(g.u64()), 0)
	case 16:
		return uint64(g.u64()) // not an AMQP type, but hand-made tables hold anything
	case 17:
		return []string{g.str()}
	case 18, 19:
		n := int(g.byte() % 6)
		if g.byte() == 255 {
			n = 1000 // the x-death of a message that went round a lot
		}
		a := make([]any, 0, n)
		for i := 0; i < n && (i < 6 || g.pos < len(g.data)); i++ {
			a = append(a, g.value(depth+1))
		}
		return a
	default:
		return g.table(depth)
	}
}
