package replay

import (
	"fmt"
	"strings"
	"time"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/vm"
	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/broker/body"
)

// FilterEnv is what a --filter expression sees of one message (expr-lang
// syntax): `error contains "timeout"`, `age > duration("1h")`,
// `headers["tenant"] == "acme"`, `attempts >= 3 && routing_key == "x"`.
type FilterEnv struct {
	ID         string         `expr:"id"`
	Exchange   string         `expr:"exchange"`    // the exchange it was parked through
	RoutingKey string         `expr:"routing_key"` // the key it was parked with
	Queue      string         `expr:"queue"`       // the parking lot
	Error      string         `expr:"error"`
	ErrorType  string         `expr:"error_type"`
	Attempts   int            `expr:"attempts"`
	Age        time.Duration  `expr:"age"`
	ParkedAt   time.Time      `expr:"parked_at"`
	Headers    map[string]any `expr:"headers"` // plain values: ints are int, tables maps, bytes strings
	Body       string         `expr:"body"`
	// BodyText is the body as text: its compression undone, MessagePack
	// written as JSON (what a plain-text search matches).
	BodyText string `expr:"body_text"`
	// Decoded is the body decoded, JSON and MessagePack alike: a map for
	// an object (`decoded.amount > 1000`), nil when it is neither.
	Decoded          any    `expr:"decoded"`
	ContentType      string `expr:"content_type"`
	Redelivered      bool   `expr:"redelivered"`
	OriginExchange   string `expr:"origin_exchange"`
	OriginRoutingKey string `expr:"origin_routing_key"`
	// CameBack: the message carries a replay id (x-replay-id): it was
	// replayed and came back to a parking lot; ReplayID is that id.
	CameBack bool   `expr:"came_back"`
	ReplayID string `expr:"replay_id"`
	// ReplayRun is the run that replayed it (x-replay-run).
	ReplayRun string `expr:"replay_run"`
}

// Filter is a compiled --filter expression.
type Filter struct {
	src      string
	prog     *vm.Program
	needBody bool // building the env skips the body (up to 16 MiB) unless used
	needText bool // body_text is used
	decode   bool // decoded is used: the body is decoded
	bodies   *body.Reader
	needHdrs bool
}

// CompileFilter compiles a filter once per run. An empty source is nil (every
// message matches). A bad expression is an error wrapping ErrBadFilter,
// naming the problem in one line.
func CompileFilter(src string) (*Filter, error) {
	if strings.TrimSpace(src) == "" {
		return nil, nil
	}
	prog, err := expr.Compile(src, expr.Env(FilterEnv{}), expr.AsBool())
	if err != nil {
		return nil, fmt.Errorf("%w %q: %s", ErrBadFilter, src, firstLine(err.Error()))
	}
	f := &Filter{src: src, prog: prog}
	node := prog.Node()
	ast.Find(node, func(n ast.Node) bool {
		if id, ok := n.(*ast.IdentifierNode); ok {
			switch id.Value {
			case "body":
				f.needBody = true
			case "body_text":
				f.needText = true
			case "decoded":
				f.decode = true
			case "headers":
				f.needHdrs = true
			}
		}
		return false
	})
	return f, nil
}

// readingBodies is f reading bodies with r (the session's schemas).
func (f *Filter) readingBodies(r *body.Reader) *Filter {
	if f != nil {
		f.bodies = r
	}
	return f
}

// String is the expression's source.
func (f *Filter) String() string {
	if f == nil {
		return ""
	}
	return f.src
}

// Match evaluates the filter on one message; a nil filter matches all. An
// evaluation error (e.g. comparing a header of another type) is a non-match
// with the error, so one odd message cannot stop a run.
func (f *Filter) Match(m broker.Message, sum Summary, queue string, now time.Time) (bool, error) {
	if f == nil {
		return true, nil
	}
	env := FilterEnv{
		ID:          sum.ID,
		Exchange:    m.Exchange,
		RoutingKey:  m.RoutingKey,
		Queue:       queue,
		Error:       sum.Facts.Error,
		ErrorType:   sum.Facts.ErrorType,
		Attempts:    int(sum.Facts.Attempts),
		Age:         sum.Age(now),
		ParkedAt:    sum.ParkedAt,
		ContentType: m.Properties.ContentType,
		Redelivered: m.Redelivered,
		CameBack:    sum.Facts.CameBack,
		ReplayID:    sum.Facts.ReplayID,
		ReplayRun:   sum.Facts.ReplayRun,
	}
	if sum.Origin != nil {
		env.OriginExchange, env.OriginRoutingKey = sum.Origin.Exchange, sum.Origin.RoutingKey
	}
	if f.needBody {
		env.Body = string(m.Body)
	}
	switch {
	case f.decode:
		d := f.bodies.Read(queue, m)
		env.BodyText, env.Decoded = d.Text(), d.Value
	case f.needText: // a text search: a JSON body is its text, not parsed
		env.BodyText = f.bodies.ReadText(queue, m)
	}
	if f.needHdrs {
		env.Headers = plainTable(m.Headers)
	} else {
		env.Headers = map[string]any{}
	}
	out, err := expr.Run(f.prog, env)
	if err != nil {
		return false, fmt.Errorf("filter %q on %s: %s", f.src, sum.ID, firstLine(err.Error()))
	}
	ok, _ := out.(bool)
	return ok, nil
}

// plainTable turns AMQP header values into the plain values an expression
// compares naturally: every integer width is int, decimals and float32 are
// float64, byte arrays are strings, tables are maps.
func plainTable(t amqp.Table) map[string]any {
	out := make(map[string]any, len(t))
	for k, v := range t {
		out[k] = broker.Plain(v, plainLeaf)
	}
	return out
}

// plainLeaf is a scalar as expressions compare it.
func plainLeaf(v any) any {
	switch x := v.(type) {
	case int8:
		return int(x)
	case uint8:
		return int(x)
	case int16:
		return int(x)
	case uint16:
		return int(x)
	case int32:
		return int(x)
	case uint32:
		return int(x)
	case int64:
		return int(x)
	case float32:
		return float64(x)
	case amqp.Decimal:
		f := float64(x.Value)
		for i := uint8(0); i < x.Scale; i++ {
			f /= 10
		}
		return f
	case []byte:
		return string(x)
	}
	return v
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return strings.TrimSpace(line)
}
