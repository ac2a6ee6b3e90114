package retrycore

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// designExample is the pipeline file a user writes.
const designExample = `# the seed's pipeline
name: payment
queue_type: quorum            # classic | quorum (all three tiers)
main:     {exchange: main.exchange,  queue: payment.main.queue, routing_key: payment.execute}
retry:
  exchange: retry.exchange
  routing_key: payment.retry
  delays: [5s, 30s, 5m]       # one delay queue per entry
error:    {exchange: error.exchange, queue: payment.error.dlq,  routing_key: payment.error}
max_retries: 3
prefetch: 10
concurrency: 4
handler_timeout: 30s

# end
`

func TestParsePipelineDesignExample(t *testing.T) {
	if n := strings.Count(designExample, "\n"); n != 15 {
		t.Fatalf("the example is %d lines", n)
	}
	p, err := ParsePipeline(strings.NewReader(designExample))
	if err != nil {
		t.Fatal(err)
	}
	want := Pipeline{
		Name: "payment", QueueType: QueueQuorum,
		Main:       MainPath{Exchange: "main.exchange", Queue: "payment.main.queue", RoutingKey: "payment.execute"},
		Retry:      RetryPath{Exchange: "retry.exchange", RoutingKey: "payment.retry", Delays: []Delay{{"5s", 5 * time.Second}, {"30s", 30 * time.Second}, {"5m", 5 * time.Minute}}},
		Error:      ErrorPath{Exchange: "error.exchange", Queue: "payment.error.dlq", RoutingKey: "payment.error"},
		MaxRetries: 3, Prefetch: 10, Concurrency: 4, HandlerTimeout: Delay{"30s", 30 * time.Second},
	}
	if !reflect.DeepEqual(p, want) {
		t.Fatalf("parsed\n %+v\nwant\n %+v", p, want)
	}
	tiers := p.Tiers()
	if len(tiers) != 3 || tiers[0].Queue != "payment.retry.5s" || tiers[0].RoutingKey != "payment.retry.5s" || tiers[2].Queue != "payment.retry.5m" {
		t.Fatalf("tiers %+v", tiers)
	}
	// Retry n goes to tier min(n, len(delays)).
	for n, q := range map[int]string{0: "payment.retry.5s", 1: "payment.retry.5s", 2: "payment.retry.30s", 3: "payment.retry.5m", 9: "payment.retry.5m"} {
		if got := p.Tier(n).Queue; got != q {
			t.Errorf("Tier(%d) = %s, want %s", n, got, q)
		}
	}
}

func TestParsePipelineDefaults(t *testing.T) {
	minimal := `name: p
main:  {exchange: m, queue: mq, routing_key: mk}
retry: {exchange: r, routing_key: rk, delays: [15s]}
error: {exchange: e, queue: eq, routing_key: ek}
`
	p, err := ParsePipeline(strings.NewReader(minimal))
	if err != nil {
		t.Fatal(err)
	}
	if p.QueueType != QueueClassic || p.MaxRetries != 3 || p.Prefetch != 10 || p.Concurrency != 1 || p.HandlerTimeout.D != 30*time.Second {
		t.Fatalf("defaults: %+v", p)
	}
}

// TestParsePipelineErrors: each mistake gives one line that names it, in
// the file's terms (keys and lines), not Go's.
func TestParsePipelineErrors(t *testing.T) {
	valid := map[string]string{
		"name":        "name: payment",
		"main":        "main: {exchange: main.exchange, queue: payment.main.queue, routing_key: payment.execute}",
		"retry":       "retry: {exchange: retry.exchange, routing_key: payment.retry, delays: [15s]}",
		"error":       "error: {exchange: error.exchange, queue: payment.error.dlq, routing_key: payment.error}",
		"max_retries": "max_retries: 3",
	}
	order := []string{"name", "main", "retry", "error", "max_retries"}
	file := func(change map[string]string, extra ...string) string {
		var lines []string
		for _, k := range order {
			if v, ok := change[k]; ok {
				if v != "" {
					lines = append(lines, v)
				}
				continue
			}
			lines = append(lines, valid[k])
		}
		return strings.Join(append(lines, extra...), "\n") + "\n"
	}
	cases := []struct {
		name string
		yaml string
		want []string // all in the one line
	}{
		{"empty file", "", []string{"the file is empty"}},
		{"only a comment", "# nothing\n", []string{"the file is empty"}},
		{"not YAML", "name: [unclosed\n", []string{"invalid pipeline", "line"}},
		{"unknown top-level key", file(nil, "retries: 5"), []string{`line 6: unknown key "retries"`}},
		{"unknown nested key", file(map[string]string{"main": "main: {exchange: m, queue: q, routing_key: k, durable: true}"}), []string{`line 2: unknown key "main.durable"`}},
		{"two unknown keys", file(nil, "foo: 1", "bar: 2"), []string{`line 6: unknown key "foo"; line 7: unknown key "bar"`}},
		{"misspelt key", file(map[string]string{"max_retries": "max_retires: 3"}), []string{`unknown key "max_retires"`}},
		{"negative delay", file(map[string]string{"retry": "retry: {exchange: r, routing_key: rk, delays: [15s, -5s]}"}), []string{"retry.delays: -5s is not a positive delay"}},
		{"zero delay", file(map[string]string{"retry": "retry: {exchange: r, routing_key: rk, delays: [0s]}"}), []string{"retry.delays: 0s is not a positive delay"}},
		{"delay under a millisecond", file(map[string]string{"retry": "retry: {exchange: r, routing_key: rk, delays: [500us]}"}), []string{"retry.delays: 500us is under 1ms"}},
		{"delay without unit", file(map[string]string{"retry": "retry: {exchange: r, routing_key: rk, delays: [15]}"}), []string{"line 3", `"15" is not a duration`}},
		{"delay not a scalar", file(map[string]string{"retry": "retry: {exchange: r, routing_key: rk, delays: [{a: 1}]}"}), []string{"line 3", "want a duration"}},
		{"duplicate delays", file(map[string]string{"retry": "retry: {exchange: r, routing_key: rk, delays: [15s, 30s, 15s]}"}), []string{"retry.delays: 15s is listed twice"}},
		{"no delays", file(map[string]string{"retry": "retry: {exchange: r, routing_key: rk}"}), []string{"retry.delays needs at least one delay"}},
		{"zero retries", file(map[string]string{"max_retries": "max_retries: 0"}), []string{"max_retries is 0", "at least 1"}},
		{"negative retries", file(map[string]string{"max_retries": "max_retries: -1"}), []string{"max_retries is -1"}},
		{"retries not a number", file(map[string]string{"max_retries": "max_retries: three"}), []string{`line 5: "three" is not a whole number`}},
		{"missing name", file(map[string]string{"name": ""}), []string{"name is required"}},
		{"missing main", file(map[string]string{"main": ""}), []string{"main.exchange is required"}},
		{"missing main queue", file(map[string]string{"main": "main: {exchange: m, routing_key: k}"}), []string{"main.queue is required"}},
		{"missing retry routing key", file(map[string]string{"retry": "retry: {exchange: r, delays: [15s]}"}), []string{"retry.routing_key is required"}},
		{"missing error queue", file(map[string]string{"error": "error: {exchange: e, routing_key: k}"}), []string{"error.queue is required"}},
		{"blank value", file(map[string]string{"name": "name: '  '"}), []string{"name is required"}},
		{"section given a value", file(map[string]string{"main": "main: payment"}), []string{`line 2: "payment" where a section {…} belongs`}},
		{"delays not a list", file(map[string]string{"retry": "retry: {exchange: r, routing_key: rk, delays: 15s}"}), []string{`line 3: "15s" where a list such as [15s] belongs`}},
		{"list where a value belongs", file(map[string]string{"name": "name: [a, b]"}), []string{"line 1: a seq where a single value belongs"}},
		{"bad queue type", file(nil, "queue_type: stream"), []string{`queue_type "stream": use classic or quorum`}},
		{"shared exchange", file(map[string]string{"error": "error: {exchange: main.exchange, queue: q, routing_key: k}"}), []string{`main.exchange and error.exchange are both "main.exchange"`}},
		{"prefetch too large", file(nil, "prefetch: 70000"), []string{"prefetch 70000: use 1 to 65535"}},
		{"negative concurrency", file(nil, "concurrency: -2"), []string{"concurrency -2: use at least 1"}},
		{"negative handler timeout", file(nil, "handler_timeout: -1s"), []string{"handler_timeout -1s is negative"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParsePipeline(strings.NewReader(c.yaml))
			if err == nil {
				t.Fatalf("accepted:\n%s", c.yaml)
			}
			msg := err.Error()
			if !errors.Is(err, ErrInvalidPipeline) {
				t.Errorf("%q does not wrap ErrInvalidPipeline", msg)
			}
			if strings.Contains(msg, "\n") || strings.Contains(msg, "retrycore.") || strings.Contains(msg, "unmarshal") {
				t.Errorf("error is not one line: %q", msg)
			}
			for _, w := range c.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not say %q", msg, w)
				}
			}
		})
	}
}

func TestLoadPipeline(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "pipeline.yaml")
	if err := os.WriteFile(good, []byte(designExample), 0o600); err != nil {
		t.Fatal(err)
	}
	if p, err := LoadPipeline(good); err != nil || p.Name != "payment" {
		t.Fatalf("LoadPipeline: %+v, %v", p, err)
	}
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("name: x\nfoo: 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadPipeline(bad); err == nil || !strings.HasPrefix(err.Error(), bad+": ") {
		t.Fatalf("error %v does not name the file", err)
	}
	if _, err := LoadPipeline(filepath.Join(dir, "missing.yaml")); err == nil || !strings.Contains(err.Error(), "missing.yaml") {
		t.Fatalf("missing file: %v", err)
	}
}

func TestNewDelay(t *testing.T) {
	for d, want := range map[time.Duration]string{
		15 * time.Second: "15s", 5 * time.Minute: "5m", 2 * time.Hour: "2h", 1500 * time.Millisecond: "1500ms", 90 * time.Second: "90s",
	} {
		if got := NewDelay(d); got.Text != want || got.D != d {
			t.Errorf("NewDelay(%v) = %+v, want %s", d, got, want)
		}
	}
}
