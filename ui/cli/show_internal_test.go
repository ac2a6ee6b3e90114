package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/replay"
	"github.com/parkinglot/parkinglot/retrycore"
)

// show prints properties, headers (x-last-error, x-retry-count first), the
// death history and the body: JSON pretty, binary as hex, huge cut at 64
// KiB, whole in -o json; odd header types do not break it; a missing id
// ends in one line, exit 1. (replay's TestFindBodiesAndHeaders reads the
// same messages from a broker.)
func TestShowBodiesAndHeaders(t *testing.T) {
	const q = "orders.dlq"
	huge := bytes.Repeat([]byte("0123456789"), 16<<20/10)
	msgs := map[string]broker.Message{
		"json": {Properties: broker.Properties{MessageID: "json", ContentType: "application/json"}, Body: []byte(`{"a":{"b":1}}`), Headers: amqp.Table{
			"a-first": "x", "x-retry-count": int8(2), "x-last-error": "boom", "x-death": "not an array",
			"odd": amqp.Table{"deep": []any{amqp.Decimal{Scale: 2, Value: 1234}, nil, float32(1.5)}}, "bad": "\xff\xfe"}},
		"bin":  {Properties: broker.Properties{MessageID: "bin", ContentType: "application/octet-stream"}, Body: []byte{0, 1, 2, 0xff}},
		"huge": {Properties: broker.Properties{MessageID: "huge"}, Body: huge},
	}
	find := func(queue, id string) (broker.Message, replay.Summary, error) {
		if queue != q {
			t.Errorf("find in %q, want %q", queue, q)
		}
		m, ok := msgs[id]
		if !ok {
			return broker.Message{}, replay.Summary{}, notFoundError(fmt.Sprintf("no message %q in queue %q (3 messages looked at)", id, queue))
		}
		return m, replay.Summarize(context.Background(), m, retrycore.OriginQuery{}), nil
	}
	show := func(t *testing.T, wantCode int, args ...string) (stdout, stderr string) {
		t.Helper()
		s := &fakeSession{find: find}
		f, b := fakeFactory(t, s)
		if code := run(context.Background(), f, args); code != wantCode {
			t.Fatalf("%s: exit %d, want %d\nstderr %s", strings.Join(args, " "), code, wantCode, b.err.String())
		}
		if !s.closed {
			t.Error("the session was not closed")
		}
		return b.out.String(), b.err.String()
	}

	out, _ := show(t, 0, "show", q, "json")
	if !strings.Contains(out, "{\n  \"a\": {\n    \"b\": 1\n  }\n}") {
		t.Errorf("JSON body not pretty-printed:\n%s", out)
	}
	iErr, iCount, iFirst := strings.Index(out, "  x-last-error"), strings.Index(out, "  x-retry-count"), strings.Index(out, "  a-first")
	if iErr < 0 || iCount < iErr || iFirst < iCount {
		t.Errorf("headers not ordered x-last-error, x-retry-count, then the rest:\n%s", out)
	}
	if !strings.Contains(out, "x-death is a string") {
		t.Errorf("a malformed x-death is not reported:\n%s", out)
	}
	out, _ = show(t, 0, "show", q, "bin")
	if !strings.Contains(out, "00000000  00 01 02 ff") {
		t.Errorf("binary body not a hex dump:\n%s", out)
	}
	out, _ = show(t, 0, "show", q, "huge")
	if !strings.Contains(out, "first 65536 of 16777210 bytes shown") || len(out) > 100<<10 {
		t.Errorf("16 MiB body: %d bytes printed", len(out))
	}
	out, _ = show(t, 0, "-o", "json", "show", q, "huge")
	var v struct {
		Message struct {
			Body string `json:"body"`
		} `json:"message"`
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil || len(v.Message.Body) != len(huge) {
		t.Errorf("show -o json of 16 MiB: %v, %d bytes", err, len(v.Message.Body))
	}
	_, stderr := show(t, 1, "show", q, "nope")
	if stderr != `parkinglot: no message "nope" in queue "`+q+`" (3 messages looked at)`+"\n" {
		t.Errorf("missing id: %q", stderr)
	}
}

// notFoundError is the engine's missing-id error: its text, wrapping
// broker.ErrNotFound.
type notFoundError string

func (e notFoundError) Error() string { return string(e) }
func (e notFoundError) Unwrap() error { return broker.ErrNotFound }

// show lists the death history newest first, in retrycore.Deaths' order:
// the head the broker last updated, then the rest by time (3.10 gave back
// tier 3, tier 1, tier 2). (retrycore's
// TestDeathHistoryOfThreeTiersIsNewestFirst gets such an x-death from a
// broker.)
func TestShowDeathHistoryNewestFirst(t *testing.T) {
	const q = "orders.error"
	at := time.Date(2026, 5, 1, 0, 4, 37, 0, time.UTC)
	death := func(queue string, d time.Duration) amqp.Table {
		return amqp.Table{"count": int64(1), "reason": "expired", "queue": queue, "time": at.Add(d), "exchange": "", "routing-keys": []any{queue}}
	}
	m := broker.Message{Properties: broker.Properties{MessageID: "tiers-0"}, Body: []byte("x"), Headers: amqp.Table{
		"x-death": []any{death("orders.retry.3", 330*time.Second), death("orders.retry.1", 0), death("orders.retry.2", 30*time.Second)},
	}}
	s := &fakeSession{find: func(string, string) (broker.Message, replay.Summary, error) {
		return m, replay.Summarize(context.Background(), m, retrycore.OriginQuery{}), nil
	}}
	f, b := fakeFactory(t, s)
	if code := run(context.Background(), f, []string{"show", q, "tiers-0"}); code != 0 {
		t.Fatalf("exit %d\nstderr %s", code, b.err.String())
	}
	out := b.out.String()
	if !strings.Contains(out, "Death history (newest first)") {
		t.Fatalf("show has no newest-first death history:\n%s", out)
	}
	last := -1
	for _, tier := range []string{"orders.retry.3", "orders.retry.2", "orders.retry.1"} {
		i := strings.Index(out, "expired        "+tier)
		if i < 0 || i < last {
			t.Fatalf("show lists %s out of order:\n%s", tier, out)
		}
		last = i
	}
}
