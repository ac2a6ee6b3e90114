package retrycore

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Queue types a pipeline can declare (all three tiers use the same).
const (
	QueueClassic = "classic"
	QueueQuorum  = "quorum"
)

// Pipeline is a three-tier retry topology and how its consumer runs, as
// pipeline.yaml writes it.
type Pipeline struct {
	Name           string    `yaml:"name"`
	QueueType      string    `yaml:"queue_type"`
	Main           MainPath  `yaml:"main"`
	Retry          RetryPath `yaml:"retry"`
	Error          ErrorPath `yaml:"error"`
	MaxRetries     int       `yaml:"max_retries"`
	Prefetch       int       `yaml:"prefetch"`
	Concurrency    int       `yaml:"concurrency"`
	HandlerTimeout Delay     `yaml:"handler_timeout"`
}

// MainPath is where producers publish and the consumer reads.
type MainPath struct {
	Exchange   string `yaml:"exchange"`
	Queue      string `yaml:"queue"`
	RoutingKey string `yaml:"routing_key"`
}

// RetryPath is the retry exchange and its delay tiers, one TTL queue each.
type RetryPath struct {
	Exchange   string  `yaml:"exchange"`
	RoutingKey string  `yaml:"routing_key"`
	Delays     []Delay `yaml:"delays"`
}

// ErrorPath is the error exchange and the parking lot behind it.
type ErrorPath struct {
	Exchange   string `yaml:"exchange"`
	Queue      string `yaml:"queue"`
	RoutingKey string `yaml:"routing_key"`
}

// Delay is a duration as written in the file ("15s", "5m"); the text names
// the delay queue, so "5m" stays "5m" rather than Go's "5m0s".
type Delay struct {
	Text string
	D    time.Duration
}

// UnmarshalYAML reads a Go duration string.
func (d *Delay) UnmarshalYAML(n *yaml.Node) error {
	var s string
	if err := n.Decode(&s); err != nil {
		return fmt.Errorf("line %d: want a duration such as 15s", n.Line)
	}
	v, err := time.ParseDuration(strings.TrimSpace(s))
	if err != nil {
		return fmt.Errorf("line %d: %q is not a duration such as 15s or 5m", n.Line, s)
	}
	*d = Delay{Text: strings.TrimSpace(s), D: v}
	return nil
}

// NewDelay builds a Delay from a duration (for pipelines built in Go).
func NewDelay(d time.Duration) Delay {
	text := d.String()
	for _, u := range []struct {
		unit time.Duration
		name string
	}{{time.Hour, "h"}, {time.Minute, "m"}, {time.Second, "s"}, {time.Millisecond, "ms"}} {
		if d > 0 && d%u.unit == 0 {
			text = fmt.Sprintf("%d%s", d/u.unit, u.name)
			break
		}
	}
	return Delay{Text: text, D: d}
}

func (d Delay) String() string { return d.Text }

// DelayTier is one delay queue of the retry path.
type DelayTier struct {
	Delay      Delay
	Queue      string // <name>.retry.<delay>
	RoutingKey string // <retry.routing_key>.<delay>
}

// Tiers lists the delay queues in order.
func (p Pipeline) Tiers() []DelayTier {
	tiers := make([]DelayTier, len(p.Retry.Delays))
	for i, d := range p.Retry.Delays {
		tiers[i] = DelayTier{Delay: d, Queue: p.Name + ".retry." + d.Text, RoutingKey: p.Retry.RoutingKey + "." + d.Text}
	}
	return tiers
}

// Tier returns the delay tier of retry n (1-based): min(n, len(delays)).
func (p Pipeline) Tier(n int) DelayTier {
	tiers := p.Tiers()
	if n < 1 {
		n = 1
	}
	if n > len(tiers) {
		n = len(tiers)
	}
	return tiers[n-1]
}

// ErrInvalidPipeline marks a pipeline file that cannot be used.
var ErrInvalidPipeline = errors.New("invalid pipeline")

// LoadPipeline reads and checks a pipeline file. Unknown keys are an error.
func LoadPipeline(path string) (Pipeline, error) {
	f, err := os.Open(path)
	if err != nil {
		return Pipeline{}, fmt.Errorf("pipeline: %w", err)
	}
	defer f.Close()
	p, err := ParsePipeline(f)
	if err != nil {
		return Pipeline{}, fmt.Errorf("%s: %w", path, err)
	}
	return p, nil
}

// ParsePipeline reads pipeline YAML, fills defaults and validates it.
func ParsePipeline(r io.Reader) (Pipeline, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return Pipeline{}, err
	}
	var p Pipeline
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&p); err != nil {
		if errors.Is(err, io.EOF) {
			return Pipeline{}, fmt.Errorf("%w: the file is empty", ErrInvalidPipeline)
		}
		return Pipeline{}, fmt.Errorf("%w: %s", ErrInvalidPipeline, YAMLProblem(err, yamlKeyProblems))
	}
	// Only a missing max_retries means the default: a written -1 or 0 is
	// an error Validate reports, not a quiet 3.
	var given struct {
		MaxRetries *int `yaml:"max_retries"`
	}
	if yaml.Unmarshal(data, &given) == nil && given.MaxRetries == nil {
		p.MaxRetries = 3
	}
	p.SetDefaults()
	return p, p.Validate()
}

// yamlKeyProblems rewrites yaml.v3's messages about the file's keys and
// values in the file's terms rather than Go's.
var yamlKeyProblems = []YAMLRule{
	Reword(`field (\S+) not found in type retrycore\.Pipeline`, `unknown key "$1"`),
	Reword(`field (\S+) not found in type retrycore\.MainPath`, `unknown key "main.$1"`),
	Reword(`field (\S+) not found in type retrycore\.RetryPath`, `unknown key "retry.$1"`),
	Reword(`field (\S+) not found in type retrycore\.ErrorPath`, `unknown key "error.$1"`),
	Reword("cannot unmarshal !!\\w+ `([^`]*)` into int", `"$1" is not a whole number`),
	Reword("cannot unmarshal !!\\w+ `([^`]*)` into string", `"$1" is not text`),
	Reword("cannot unmarshal !!\\w+ `([^`]*)` into retrycore\\.\\w+Path", `"$1" where a section {…} belongs`),
	Reword("cannot unmarshal !!\\w+ `([^`]*)` into \\[\\]retrycore\\.Delay", `"$1" where a list such as [15s] belongs`),
	Reword(`cannot unmarshal !!(\w+) into (string|int)`, `a $1 where a single value belongs`),
	Reword(`cannot unmarshal !!(\w+) into retrycore\.\w+Path`, `a $1 where a section {…} belongs`),
	Reword("cannot unmarshal !!(\\w+)(?: `[^`]*`)? into retrycore\\.Pipeline", `not a pipeline: a $1 where the keys name, main, retry, error … belong`),
	Reword("cannot unmarshal !!(\\w+)(?: `[^`]*`)? into \\S+", `a $1 where another kind of value belongs`),
}

// SetDefaults fills what a pipeline may leave out.
func (p *Pipeline) SetDefaults() {
	if p.QueueType == "" {
		p.QueueType = QueueClassic
	}
	if p.Prefetch == 0 {
		p.Prefetch = 10
	}
	if p.Concurrency == 0 {
		p.Concurrency = 1
	}
	if p.HandlerTimeout.D == 0 {
		p.HandlerTimeout = Delay{Text: "30s", D: 30 * time.Second}
	}
}

// Validate says, in one line, the first thing wrong with the pipeline.
func (p Pipeline) Validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: "+format, append([]any{ErrInvalidPipeline}, args...)...)
	}
	required := []struct{ key, val string }{
		{"name", p.Name},
		{"main.exchange", p.Main.Exchange}, {"main.queue", p.Main.Queue}, {"main.routing_key", p.Main.RoutingKey},
		{"retry.exchange", p.Retry.Exchange}, {"retry.routing_key", p.Retry.RoutingKey},
		{"error.exchange", p.Error.Exchange}, {"error.queue", p.Error.Queue}, {"error.routing_key", p.Error.RoutingKey},
	}
	for _, r := range required {
		if strings.TrimSpace(r.val) == "" {
			return bad("%s is required", r.key)
		}
	}
	if p.QueueType != QueueClassic && p.QueueType != QueueQuorum {
		return bad("queue_type %q: use classic or quorum", p.QueueType)
	}
	exchanges := map[string]string{}
	for _, e := range []struct{ path, ex string }{{"main", p.Main.Exchange}, {"retry", p.Retry.Exchange}, {"error", p.Error.Exchange}} {
		if other, dup := exchanges[e.ex]; dup { // in file order, so the message is always the same
			return bad("%s.exchange and %s.exchange are both %q; the three paths need separate exchanges", other, e.path, e.ex)
		}
		exchanges[e.ex] = e.path
	}
	if len(p.Retry.Delays) == 0 {
		return bad("retry.delays needs at least one delay, such as [15s]")
	}
	seen := map[string]bool{}
	for _, d := range p.Retry.Delays {
		if d.D <= 0 {
			return bad("retry.delays: %s is not a positive delay", d.Text)
		}
		if d.D < time.Millisecond {
			// x-message-ttl counts whole milliseconds: less would be 0,
			// a retry at once.
			return bad("retry.delays: %s is under 1ms, the shortest a queue's message TTL can hold", d.Text)
		}
		if seen[d.Text] {
			return bad("retry.delays: %s is listed twice", d.Text)
		}
		seen[d.Text] = true
	}
	if p.MaxRetries < 1 {
		return bad("max_retries is %d; it counts retries after the first attempt and must be at least 1 (a handler parks at once by failing permanently)", p.MaxRetries)
	}
	if p.Prefetch < 1 || p.Prefetch > 65535 {
		return bad("prefetch %d: use 1 to 65535", p.Prefetch)
	}
	if p.Concurrency < 1 {
		return bad("concurrency %d: use at least 1", p.Concurrency)
	}
	if p.HandlerTimeout.D < 0 {
		return bad("handler_timeout %s is negative", p.HandlerTimeout.Text)
	}
	return nil
}
