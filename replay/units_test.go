package replay_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/replay"
	"github.com/parkinglot/parkinglot/retrycore"
)

func TestTransformFreshBudgetKeepsTheRest(t *testing.T) {
	m := broker.Message{
		Properties: broker.Properties{MessageID: "m1", ContentType: "text/plain", UserID: "alice", Expiration: "60000", AppID: "app", Priority: 4},
		Headers: amqp.Table{
			"x-death": []any{amqp.Table{"count": int64(1)}}, "x-first-death-queue": "q", "x-first-death-reason": "rejected",
			"x-first-death-exchange": "ex", "x-last-death-queue": "q", "x-retry-count": int32(3), "x-delivery-count": int64(2),
			"x-replay-count": int16(2), "x-last-error": "boom", "tenant": "acme",
		},
		Body: []byte("body"),
	}
	now := time.Unix(1714564800, 500)
	p, resets := replay.Transform(m, "rid-1", now)
	for _, k := range []string{"x-death", "x-first-death-queue", "x-first-death-reason", "x-first-death-exchange", "x-last-death-queue", "x-retry-count", "x-delivery-count"} {
		if _, ok := p.Headers[k]; ok {
			t.Errorf("%s kept", k)
		}
	}
	if p.Headers["x-replay-count"] != int32(3) || p.Headers["x-replay-id"] != "rid-1" || !p.Headers["x-replayed-at"].(time.Time).Equal(time.Unix(1714564800, 0)) {
		t.Errorf("replay headers %v", p.Headers)
	}
	if p.Headers["x-last-error"] != "boom" || p.Headers["tenant"] != "acme" {
		t.Errorf("other headers not kept: %v", p.Headers)
	}
	if p.UserId != "" || p.Expiration != "" || p.MessageId != "m1" || p.AppId != "app" || p.Priority != 4 || string(p.Body) != "body" {
		t.Errorf("properties %+v", p)
	}
	if _, ok := m.Headers["x-death"]; !ok {
		t.Errorf("Transform changed its input")
	}
	if err := p.Headers.Validate(); err != nil {
		t.Errorf("headers do not validate: %v", err)
	}
	if want := []string{"x-death", "x-first-death-*", "x-last-death-*", "x-retry-count", "x-delivery-count"}; !slices.Equal(resets, want) {
		t.Errorf("resets %q, want %q", resets, want)
	}
}

// The daemon parks a copy persistent and records the producer's mode; the
// replayed copy has that mode again and not the header. Without the header
// the parked message's mode is kept.
func TestTransformGivesBackTheProducersDeliveryMode(t *testing.T) {
	for _, c := range []struct {
		name   string
		mode   uint8
		header any // x-original-delivery-mode; nil: absent
		want   uint8
	}{
		{"transient", amqp.Persistent, int32(1), amqp.Transient},
		{"none set", amqp.Persistent, int32(0), 0},
		{"no header, persistent", amqp.Persistent, nil, amqp.Persistent},
		{"no header, transient", amqp.Transient, nil, amqp.Transient},
	} {
		h := amqp.Table{"tenant": "acme"}
		if c.header != nil {
			h[retrycore.HeaderOriginalDeliveryMode] = c.header
		}
		m := broker.Message{Properties: broker.Properties{MessageID: "m1", DeliveryMode: c.mode}, Headers: h, Body: []byte("b")}
		p, _ := replay.Transform(m, "rid", time.Now())
		if p.DeliveryMode != c.want {
			t.Errorf("%s: delivery mode %d, want %d", c.name, p.DeliveryMode, c.want)
		}
		if _, ok := p.Headers[retrycore.HeaderOriginalDeliveryMode]; ok {
			t.Errorf("%s: the copy keeps %s", c.name, retrycore.HeaderOriginalDeliveryMode)
		}
		if p.Headers["tenant"] != "acme" {
			t.Errorf("%s: headers %v", c.name, p.Headers)
		}
		if m.Properties.DeliveryMode != c.mode || (c.header != nil && m.Headers[retrycore.HeaderOriginalDeliveryMode] != c.header) {
			t.Errorf("%s: Transform changed the parked message", c.name)
		}
	}
}

// TestTransformResetsFrameworkBudgets: on the parking lots recorded from
// rascal, Celery and pika (testdata/frameworks), the copy gets a fresh
// budget in the framework's own counters too, says which it reset, and
// the parked message keeps its values (rascal's table is nested).
func TestTransformResetsFrameworkBudgets(t *testing.T) {
	for _, c := range []struct {
		scenario string
		resets   []string
		check    func(t *testing.T, h amqp.Table)
	}{
		{"rascal-republish-forward", []string{`rascal.recovery["orders.process"].republished`, `rascal.recovery["orders.process"].forwarded`}, func(t *testing.T, h amqp.Table) {
			r := h["rascal"].(amqp.Table)
			if _, ok := r["recovery"]; ok {
				t.Errorf("rascal.recovery kept: %v", r)
			}
			if r["originalQueue"] != "orders.process" || h["CC"] == nil {
				t.Errorf("rascal's other values or CC not kept: %v", h)
			}
		}},
		{"celery-retries", []string{"x-death", "x-first-death-*", "celery retries"}, func(t *testing.T, h amqp.Table) {
			if n, ok := broker.IntValue(h["retries"]); !ok || n != 0 {
				t.Errorf("retries %#v, want 0", h["retries"])
			}
		}},
		{"pika-reject", []string{"x-death", "x-first-death-*", "x-retry-count"}, nil},
	} {
		t.Run(c.scenario, func(t *testing.T) {
			m := loadFramework(t, c.scenario)
			before := retrycore.Decode(m.Headers)
			p, resets := replay.Transform(m, "rid", time.Now())
			if !slices.Equal(resets, c.resets) {
				t.Errorf("resets %q, want %q", resets, c.resets)
			}
			if got := replay.Resets(m.Headers); !slices.Equal(got, resets) {
				t.Errorf("Resets (the plan's) %q, Transform's %q", got, resets)
			}
			if c.check != nil {
				c.check(t, p.Headers)
			}
			if after := retrycore.Decode(m.Headers); after.Attempts != before.Attempts || after.AttemptsSource != before.AttemptsSource {
				t.Errorf("the parked message changed: attempts %d (%s), was %d (%s)", after.Attempts, after.AttemptsSource, before.Attempts, before.AttemptsSource)
			}
			if f := retrycore.Decode(p.Headers); f.Attempts > 1 {
				t.Errorf("the copy still counts %d attempts (%s): no fresh budget", f.Attempts, f.AttemptsSource)
			}
			if err := p.Headers.Validate(); err != nil {
				t.Errorf("headers do not validate: %v", err)
			}
		})
	}
}

// loadFramework reads the parked message of a recording in
// testdata/frameworks.
func loadFramework(t *testing.T, scenario string) broker.Message {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "testdata", "frameworks", scenario+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var rec struct {
		Message json.RawMessage `json:"message"`
	}
	if err := json.Unmarshal(data, &rec); err != nil {
		t.Fatal(err)
	}
	var m broker.Message
	if err := m.UnmarshalJSON(rec.Message); err != nil {
		t.Fatalf("%s: %v", scenario, err)
	}
	return m
}

func TestReplayIDsAreUniqueUUIDs(t *testing.T) {
	re := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	seen := map[string]bool{}
	for range 10000 {
		id := replay.NewReplayID()
		if !re.MatchString(id) || seen[id] {
			t.Fatalf("replay id %q: not a fresh UUID v4", id)
		}
		seen[id] = true
	}
}

func TestFilterCompileErrorsAndPlainHeaders(t *testing.T) {
	for _, src := range []string{"error ==", `age > "1h"`, "nosuch == 1", `id + 1`} {
		if _, err := replay.CompileFilter(src); !errors.Is(err, replay.ErrBadFilter) || strings.Contains(err.Error(), "\n") {
			t.Errorf("CompileFilter(%q) = %v; want one line wrapping ErrBadFilter", src, err)
		}
	}
	f, err := replay.CompileFilter(`headers["n"] == 3 && headers["b"] == "x" && headers["t"]["k"] == 1 && body contains "needle"`)
	if err != nil {
		t.Fatal(err)
	}
	m := broker.Message{Headers: amqp.Table{"n": int8(3), "b": []byte("x"), "t": amqp.Table{"k": uint16(1)}}, Body: []byte("a needle here")}
	ok, err := f.Match(m, replay.Summary{ID: "x"}, "q", time.Now())
	if err != nil || !ok {
		t.Errorf("match = %v, %v; want true: integer widths and byte arrays read as plain values", ok, err)
	}
	// A runtime error on one odd message is a non-match with an error.
	f, _ = replay.CompileFilter(`headers["n"] > 2`)
	if ok, err := f.Match(broker.Message{Headers: amqp.Table{"n": "text"}}, replay.Summary{ID: "odd"}, "q", time.Now()); ok || err == nil {
		t.Errorf("odd header type: %v %v; want no match and an error", ok, err)
	}
}

func TestIsJSONAndParkingLotNames(t *testing.T) {
	for ct, want := range map[string]bool{"application/json": true, "application/json; charset=utf-8": true, "application/vnd.x+json": true, "text/plain": false, "": false} {
		if replay.IsJSON(ct) != want {
			t.Errorf("IsJSON(%q) != %v", ct, want)
		}
	}
	for name, want := range map[string]bool{"payment.error.dlq": true, "orders_error": true, "x.dead-letter": true, "parking-lot": true, "orders.errors": true, "orders": false, "payment.main.queue": false} {
		if replay.LooksLikeParkingLot(name) != want {
			t.Errorf("LooksLikeParkingLot(%q) != %v", name, want)
		}
	}
}

// A filter reads a body as its producer wrote it: `decoded` is the
// document of a JSON or MessagePack body (compressed or not), and a plain
// text search matches the body as text (decompressed, MessagePack written
// as JSON); a body neither JSON nor MessagePack has no decoded document.
func TestFilterReadsDecodedBodies(t *testing.T) {
	for _, scenario := range []string{"kombu-msgpack-zlib", "pika-gzip-json", "kombu-reject"} {
		m := loadFramework(t, scenario)
		for src, want := range map[string]bool{
			`decoded.amount > 1000 && decoded.customer.vip && decoded.items[0].sku == "A-1"`: scenario != "kombu-reject",
			`decoded.order_id == "4711"`:    scenario != "kombu-reject",
			replay.TextQuery("4711").Filter: scenario != "kombu-reject",
			replay.TextQuery("c-77").Filter: scenario != "kombu-reject",
			replay.TextQuery("1042").Filter: scenario == "kombu-reject",
			`decoded.orderId == 1042`:       scenario == "kombu-reject",
		} {
			f, err := replay.CompileFilter(src)
			if err != nil {
				t.Fatal(err)
			}
			ok, err := f.Match(m, replay.Summary{ID: scenario}, "q", time.Now())
			if ok != want {
				t.Errorf("%s: %s = %v (%v), want %v", scenario, src, ok, err, want)
			}
		}
	}
}
