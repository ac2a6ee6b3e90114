//go:build integration

package replay_test

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/broker/brokertest"
	"github.com/parkinglot/parkinglot/replay"
)

// everyType holds every AMQP field type amqp091-go writes (no NaN or Inf:
// RabbitMQ closes the connection on them).
func everyType() amqp.Table {
	return amqp.Table{
		"int8": int8(-128), "uint8": uint8(255), "int16": int16(-32768), "uint16": uint16(65535),
		"int32": int32(math.MinInt32), "uint32": uint32(math.MaxUint32), "int64": int64(math.MaxInt64),
		"float32": float32(-1.5e-7), "float64": math.MaxFloat64,
		"decimal": amqp.Decimal{Scale: 4, Value: 123456789},
		"bool":    true, "string": "héllo \"quoted\" ✓", "bad-utf8": "bad \xff\xfe",
		"bytes":     []byte{0, 0xff, 0x80},
		"timestamp": time.Unix(1714564800, 0),
		"void":      nil,
		"table":     amqp.Table{"a": amqp.Table{"b": []any{int16(1), "c", amqp.Table{}}}},
		"array":     []any{int8(1), "two", nil, []byte("y"), []any{uint16(3), []any{time.Unix(9, 0)}}},
		"x-death": []any{amqp.Table{"count": int64(2), "reason": "rejected", "queue": "orders", "time": time.Unix(1714564800, 0),
			"exchange": "ex", "routing-keys": []any{"rk"}}},
		"x-last-error": "boom",
	}
}

// export → delete → import restores every message identically: body
// bytes, properties and typed headers.
func TestExportDeleteImportRestoresEveryMessageIdentically(t *testing.T) {
	ch := brokertest.Channel(t)
	fan := brokertest.Name(t, "fan")
	q := brokertest.Name(t, "dlq")
	ref := brokertest.Name(t, "reference")
	brokertest.DeclareExchange(t, ch, fan, "fanout")
	brokertest.DeclareQueue(t, ch, q, nil)
	brokertest.DeclareQueue(t, ch, ref, nil)
	bind(t, ch, q, fan, "")
	bind(t, ch, ref, fan, "")
	big := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB
	msgs := []amqp.Publishing{
		{MessageId: "all-props", ContentType: "application/json", ContentEncoding: "identity", DeliveryMode: amqp.Persistent, Priority: 3,
			CorrelationId: "corr", ReplyTo: "replies", Expiration: "3600000", Timestamp: time.Unix(1714564800, 0), Type: "payment",
			UserId: "guest", AppId: "billing", Headers: everyType(), Body: []byte(`{"ok":true}`)},
		{MessageId: "binary", ContentType: "application/octet-stream", Body: []byte{0, 1, 2, 0xff, 0xfe, 0x80}},
		{Body: []byte("no message id: content id")},
		{MessageId: "empty-body"},
		{MessageId: "big", Body: big, Headers: amqp.Table{"n": int32(1)}},
	}
	brokertest.PublishMany(t, ch, fan, "", msgs)
	want := drainAll(t, ch, ref, len(msgs))

	s, _ := openSession(t, replay.Config{})
	ctx := testCtx(t, 2*time.Minute)
	file := filepath.Join(t.TempDir(), "parked.jsonl")
	if res, err := s.Export(ctx, replay.ExportOptions{Queue: q, File: file}); err != nil || res.Done != len(msgs) {
		t.Fatalf("export: %v, %+v", err, res)
	}
	if fi, err := os.Stat(file); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("export file: %v mode %v, want 0600", err, fi.Mode().Perm())
	}
	brokertest.WaitDepth(t, q, len(msgs), 15*time.Second) // export without Remove takes nothing
	if _, err := s.Export(ctx, replay.ExportOptions{Queue: q, File: file}); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("a second export over the file: %v, want a refusal", err)
	}
	if res, err := s.Delete(ctx, replay.DeleteOptions{Queue: q, Select: replay.Selector{All: true}}); err != nil || res.Done != len(msgs) {
		t.Fatalf("delete: %v, %+v", err, res)
	}
	brokertest.WaitDepth(t, q, 0, 15*time.Second)
	if res, err := s.Import(ctx, replay.ImportOptions{File: file}); err != nil || res.Done != len(msgs) {
		t.Fatalf("import: %v, %+v", err, res)
	}
	got := drainAll(t, ch, q, len(msgs))
	if len(got) != len(want) {
		t.Fatalf("%d messages after import, want %d", len(got), len(want))
	}
	for i := range want {
		w, g := broker.FromDelivery(want[i]), broker.FromDelivery(got[i])
		if w.Properties != g.Properties {
			t.Errorf("message %d properties:\n got %+v\nwant %+v", i, g.Properties, w.Properties)
		}
		if !reflect.DeepEqual(w.Headers, g.Headers) {
			t.Errorf("message %d headers:\n got %#v\nwant %#v", i, g.Headers, w.Headers)
		}
		if !bytes.Equal(w.Body, g.Body) {
			t.Errorf("message %d body differs (%d vs %d bytes)", i, len(g.Body), len(w.Body))
		}
	}
	var actions []string
	for _, e := range auditEntries(t, s.AuditPath) {
		actions = append(actions, e.Action+":"+e.Result)
	}
	if strings.Count(strings.Join(actions, ","), "delete:ok") != len(msgs) || strings.Count(strings.Join(actions, ","), "import:ok") != len(msgs) {
		t.Errorf("audit log %v: want a delete and an import entry per message", actions)
	}
}

// An export with Remove takes each message out only after its line is on
// disk, and the file imports back. (ui/cli tests what `export --remove`
// prints.)
func TestExportRemoveThenImport(t *testing.T) {
	ch := brokertest.Channel(t)
	q := brokertest.Name(t, "dlq")
	brokertest.DeclareQueue(t, ch, q, nil)
	parkPlain(t, ch, q, 300)
	s, _ := openSession(t, replay.Config{})
	ctx := testCtx(t, 2*time.Minute)
	file := filepath.Join(t.TempDir(), "out.jsonl")
	if res, err := s.Export(ctx, replay.ExportOptions{Queue: q, File: file, Remove: true}); err != nil || res.Done != 300 {
		t.Fatalf("export with Remove: %v, %+v", err, res)
	}
	brokertest.WaitDepth(t, q, 0, 15*time.Second)
	data, err := os.ReadFile(file)
	if err != nil || bytes.Count(data, []byte("\n")) != 300 {
		t.Fatalf("export file: %v, %d lines", err, bytes.Count(data, []byte("\n")))
	}
	n := 0
	for _, e := range auditEntries(t, s.AuditPath) {
		if e.Action == "export-remove" && e.Result == "ok" {
			n++
		}
	}
	if n != 300 {
		t.Errorf("%d export-remove audit entries, want 300", n)
	}
	if res, err := s.Import(ctx, replay.ImportOptions{File: file}); err != nil || res.Done != 300 {
		t.Fatalf("import: %v, %+v", err, res)
	}
	brokertest.WaitDepth(t, q, 300, 15*time.Second)
}

// A truncated or non-JSON line is an error naming the line, in one line,
// and nothing is published.
func TestImportBadFileNamesLineAndPublishesNothing(t *testing.T) {
	ch := brokertest.Channel(t)
	q := brokertest.Name(t, "dlq")
	brokertest.DeclareQueue(t, ch, q, nil)
	parkPlain(t, ch, q, 3)
	s, _ := openSession(t, replay.Config{})
	ctx := testCtx(t, time.Minute)
	dir := t.TempDir()
	good := filepath.Join(dir, "good.jsonl")
	if _, err := s.Export(ctx, replay.ExportOptions{Queue: q, File: good}); err != nil {
		t.Fatalf("export: %v", err)
	}
	data, _ := os.ReadFile(good)
	lines := strings.SplitAfter(string(data), "\n")

	truncated := filepath.Join(dir, "truncated.jsonl")
	_ = os.WriteFile(truncated, []byte(lines[0]+lines[1]+lines[2][:len(lines[2])/2]), 0o600)
	notJSON := filepath.Join(dir, "notjson.jsonl")
	_ = os.WriteFile(notJSON, []byte(lines[0]+"this is not json\n"+lines[2]), 0o600)
	notMessage := filepath.Join(dir, "notmessage.jsonl")
	_ = os.WriteFile(notMessage, []byte(`{"hello":"world"}`+"\n"), 0o600)
	// A hand-made line RabbitMQ would answer by closing the connection.
	nan, err := json.Marshal(broker.Message{Headers: amqp.Table{"retry": amqp.Table{"ratio": math.NaN()}}, Body: []byte("x")})
	if err != nil {
		t.Fatal(err)
	}
	nonFinite := filepath.Join(dir, "nan.jsonl")
	_ = os.WriteFile(nonFinite, []byte(lines[0]+`{"queue":"`+q+`","message":`+string(nan)+"}\n"), 0o600)
	for _, tc := range []struct{ file, want string }{
		{truncated, "line 3: not JSON"},
		{notJSON, "line 2: not JSON"},
		{notMessage, `line 1: not an exported message`},
		{nonFinite, "line 2: header retry.ratio is not a finite number"},
	} {
		_, err := s.Import(ctx, replay.ImportOptions{File: tc.file, To: dest("", q)})
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("import %s: %v, want one line with %q", filepath.Base(tc.file), err, tc.want)
		}
		brokertest.WaitDepth(t, q, 3, 15*time.Second)
	}
}

// An import drops the broker's counts of the queue the message was
// exported from (x-delivery-count, x-acquired-count): stale in another
// queue, where they would read as its hand-outs.
func TestImportDropsTheBrokersCounts(t *testing.T) {
	ch := brokertest.Channel(t)
	q := brokertest.Name(t, "dlq")
	brokertest.DeclareQueue(t, ch, q, nil)
	brokertest.Publish(t, ch, "", q, amqp.Publishing{MessageId: "counted", Body: []byte("{}"),
		Headers: amqp.Table{"x-delivery-count": int64(3), "x-acquired-count": int64(5), "tenant": "acme"}})
	s, _ := openSession(t, replay.Config{})
	ctx := testCtx(t, time.Minute)
	file := filepath.Join(t.TempDir(), "out.jsonl")
	if res, err := s.Export(ctx, replay.ExportOptions{Queue: q, File: file, Remove: true}); err != nil || res.Done != 1 {
		t.Fatalf("export: %v, %+v", err, res)
	}
	if res, err := s.Import(ctx, replay.ImportOptions{File: file}); err != nil || res.Done != 1 {
		t.Fatalf("import: %v, %+v", err, res)
	}
	d := getOne(t, ch, q)
	for _, k := range []string{"x-delivery-count", "x-acquired-count"} {
		if v, ok := d.Headers[k]; ok {
			t.Errorf("the imported message has %s %v", k, v)
		}
	}
	if d.Headers["tenant"] != "acme" {
		t.Errorf("headers %v, want the others kept", d.Headers)
	}
}

// An import whose audit log fails (a full disk) stops, and what it
// reports agrees with the destination: each copy the broker confirmed is
// counted imported (nothing is parked to remove), and no line says a
// message is "still parked".
func TestImportWhoseAuditLogFailsReportsWhatItPublished(t *testing.T) {
	ch := brokertest.Channel(t)
	q := brokertest.Name(t, "dlq")
	dst := brokertest.Name(t, "dst")
	brokertest.DeclareQueue(t, ch, q, nil)
	brokertest.DeclareQueue(t, ch, dst, nil)
	parkPlain(t, ch, q, 5)
	s, _ := openSession(t, replay.Config{})
	ctx := testCtx(t, time.Minute)
	file := filepath.Join(t.TempDir(), "out.jsonl")
	if res, err := s.Export(ctx, replay.ExportOptions{Queue: q, File: file}); err != nil || res.Done != 5 {
		t.Fatalf("export: %v, %+v", err, res)
	}
	s.AuditPath = "/dev/full" // every write: no space left on device
	res, err := s.Import(ctx, replay.ImportOptions{File: file, To: dest("", dst)})
	if err == nil || !strings.Contains(err.Error(), "audit log") {
		t.Fatalf("import with a full audit log: %v, %+v", err, res)
	}
	if got := brokertest.Depth(t, ch, dst); got != res.Done {
		t.Errorf("%d copies in %s, the import says %d imported", got, dst, res.Done)
	}
	for _, f := range res.Failures {
		if strings.Contains(f.Err, "parked") {
			t.Errorf("failure %+v speaks of a parked message", f)
		}
	}
}
