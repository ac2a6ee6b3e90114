package retrycore

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker"
)

// DeclareOptions are what Declare needs besides the channel and pipeline.
type DeclareOptions struct {
	// Server is the broker's version (broker.Conn.ServerVersion); it decides
	// the parking lot's delivery-limit argument on quorum queues.
	Server broker.Version
	// Management, when set and answering, lets Declare compare existing
	// queues and exchanges before declaring anything (reporting every
	// differing argument) and tell created from already there. Without it
	// Declare relies on the broker's PRECONDITION_FAILED text.
	Management *broker.Management
}

// Entity kinds in a Report.
const (
	KindExchange = "exchange"
	KindQueue    = "queue"
	KindBinding  = "binding"
)

// Statuses in a Report.
const (
	StatusCreated  = "created"  // did not exist before
	StatusExisting = "exists"   // already there with the same arguments
	StatusDeclared = "declared" // declared; whether it was new is unknown (no management API)
)

// ReportEntry is one exchange, queue or binding Declare made sure of.
type ReportEntry struct {
	Kind   string `json:"kind"`
	Name   string `json:"name"`
	Status string `json:"status"`
	// Detail says what it is: exchange type, queue type and arguments, or
	// the binding's exchange and routing key.
	Detail string `json:"detail,omitempty"`
	// A removal's: the messages a forced delete discarded, why something
	// was kept, and the consumers that kept a queue.
	Discarded int        `json:"discarded,omitempty"`
	Kept      KeptReason `json:"kept,omitempty"`
	Consumers int        `json:"consumers,omitempty"`
}

// Report is what Declare did, for the CLI to print.
type Report struct {
	Pipeline string        `json:"pipeline"`
	Server   string        `json:"server"`
	Entries  []ReportEntry `json:"entries"`
	Warnings []string      `json:"warnings,omitempty"`
}

// queueSpec is one queue the pipeline needs, with its binding.
type queueSpec struct {
	name     string
	role     string // main | delay | parking lot, for Detail
	args     amqp.Table
	exchange string
	key      string
}

// Declare makes sure the pipeline's three tiers exist: three durable direct
// exchanges, the main queue, one TTL delay queue per tier dead-lettering
// back to the main exchange, and the parking lot. It is idempotent. When a
// queue or exchange exists with different arguments it returns a
// *TopologyError naming them; the channel is unusable afterwards if the
// broker refused a declare (406 closes it).
func Declare(ctx context.Context, ch *amqp.Channel, p Pipeline, opts DeclareOptions) (Report, error) {
	if err := p.Validate(); err != nil {
		return Report{}, err
	}
	rep := Report{Pipeline: p.Name, Server: opts.Server.String()}
	queues, warnings := queueSpecs(p, opts.Server)
	rep.Warnings = warnings
	exchanges := []string{p.Main.Exchange, p.Retry.Exchange, p.Error.Exchange}

	existing, unavailable, err := inspect(ctx, opts.Management, exchanges, queues)
	if err != nil {
		return rep, err
	}
	if unavailable != nil {
		rep.Warnings = append(rep.Warnings, fmt.Sprintf("cannot tell new from existing, nor list every differing argument: %v", unavailable))
	}
	status := func(kind, name string) string {
		if existing == nil {
			return StatusDeclared
		}
		if existing[kind+" "+name] {
			return StatusExisting
		}
		return StatusCreated
	}

	for _, ex := range exchanges {
		if err := ch.ExchangeDeclare(ex, amqp.ExchangeDirect,
			true,  // durable
			false, // auto-delete
			false, // internal
			false, // no-wait
			nil); err != nil {
			return rep, explainDeclare(KindExchange, ex, err)
		}
		rep.Entries = append(rep.Entries, ReportEntry{Kind: KindExchange, Name: ex, Status: status(KindExchange, ex), Detail: amqp.ExchangeDirect})
	}
	for _, q := range queues {
		if _, err := ch.QueueDeclare(q.name,
			true,  // durable
			false, // auto-delete
			false, // exclusive
			false, // no-wait
			q.args); err != nil {
			return rep, explainDeclare(KindQueue, q.name, err)
		}
		rep.Entries = append(rep.Entries, ReportEntry{Kind: KindQueue, Name: q.name, Status: status(KindQueue, q.name), Detail: q.role + ", " + describeArgs(q.args)})
	}
	for _, q := range queues {
		if err := ch.QueueBind(q.name, q.key, q.exchange,
			false, // no-wait
			nil); err != nil {
			return rep, fmt.Errorf("bind queue %q to exchange %q with key %q: %w", q.name, q.exchange, q.key, broker.Explain(err))
		}
		name := q.exchange + " → " + q.name
		rep.Entries = append(rep.Entries, ReportEntry{Kind: KindBinding, Name: name, Status: status(KindBinding, name), Detail: "routing key " + q.key})
	}
	return rep, ctx.Err()
}

// queueSpecs lists the pipeline's queues and their arguments.
func queueSpecs(p Pipeline, server broker.Version) ([]queueSpec, []string) {
	quorum := p.QueueType == QueueQuorum
	var warnings []string
	main := amqp.Table{
		"x-queue-type": p.QueueType,
		// A message the broker dead-letters from the main queue (a quorum
		// delivery limit, a nack without requeue) is parked, never dropped.
		"x-dead-letter-exchange":    p.Error.Exchange,
		"x-dead-letter-routing-key": p.Error.RoutingKey,
	}
	specs := []queueSpec{{name: p.Main.Queue, role: "main", args: main, exchange: p.Main.Exchange, key: p.Main.RoutingKey}}
	for _, t := range p.Tiers() {
		args := amqp.Table{
			"x-queue-type":              p.QueueType,
			"x-message-ttl":             t.Delay.D.Milliseconds(),
			"x-dead-letter-exchange":    p.Main.Exchange,
			"x-dead-letter-routing-key": p.Main.RoutingKey,
		}
		if quorum {
			// At-least-once dead-lettering: an expired retry is not lost if
			// the main queue cannot take it at that moment.
			args["x-dead-letter-strategy"] = "at-least-once"
			args["x-overflow"] = "reject-publish"
		}
		specs = append(specs, queueSpec{name: t.Queue, role: "delay " + t.Delay.Text, args: args, exchange: p.Retry.Exchange, key: t.RoutingKey})
	}
	parking := amqp.Table{"x-queue-type": p.QueueType}
	if quorum {
		switch {
		case server.AtLeast(4, 0, 0):
			// 4.0 made 20 the default delivery limit; browsing (hold and
			// give back) would exhaust it and drop parked messages.
			parking["x-delivery-limit"] = int64(-1)
		case !server.Known():
			warnings = append(warnings, fmt.Sprintf("server version unknown: parking lot %q declared without x-delivery-limit; on RabbitMQ 4.x that means a limit of 20 (set a policy delivery-limit=-1)", p.Error.Queue))
		default:
			// 3.x: unlimited by default, and -1 is taken literally there
			// (measured on 3.10.8: a message was dropped at its first
			// give-back), so leave it out.
		}
	}
	specs = append(specs, queueSpec{name: p.Error.Queue, role: "parking lot", args: parking, exchange: p.Error.Exchange, key: p.Error.RoutingKey})
	return specs, warnings
}

// inspect reads what exists through the management API and checks it
// against the pipeline before anything is declared, so that every differing
// argument of every queue is reported at once. Without a management API,
// or when it fails, it returns a nil map and why (the declare goes ahead
// and relies on the broker's 406 text); err is the differing topology.
func inspect(ctx context.Context, m *broker.Management, exchanges []string, queues []queueSpec) (existing map[string]bool, unavailable, err error) {
	if m == nil {
		return nil, nil, nil
	}
	existing = map[string]bool{}
	var problems []*TopologyError
	for _, ex := range exchanges {
		info, err := m.Exchange(ctx, ex)
		switch {
		case errors.Is(err, broker.ErrNotFound):
			continue
		case err != nil:
			return nil, err, nil
		}
		existing[KindExchange+" "+ex] = true
		if info.Type != amqp.ExchangeDirect {
			problems = append(problems, &TopologyError{Kind: KindExchange, Name: ex, Diffs: []ArgDiff{{Arg: "type", Have: info.Type, Want: amqp.ExchangeDirect}}})
		}
	}
	for _, q := range queues {
		info, err := m.Queue(ctx, q.name)
		switch {
		case errors.Is(err, broker.ErrNotFound):
			continue
		case err != nil:
			return nil, err, nil
		}
		existing[KindQueue+" "+q.name] = true
		if diffs := diffQueue(info, q.args); len(diffs) > 0 {
			problems = append(problems, &TopologyError{Kind: KindQueue, Name: q.name, Diffs: diffs})
		}
		bindings, err := m.Bindings(ctx, q.exchange)
		if err != nil && !errors.Is(err, broker.ErrNotFound) {
			return nil, err, nil
		}
		for _, b := range bindings {
			if b.DestinationType == "queue" && b.Destination == q.name && b.RoutingKey == q.key {
				existing[KindBinding+" "+q.exchange+" → "+q.name] = true
			}
		}
	}
	switch len(problems) {
	case 0:
		return existing, nil, nil
	case 1:
		return nil, nil, problems[0]
	}
	return nil, nil, &TopologyErrors{Errors: problems}
}

// equivalenceArgs are the queue arguments RabbitMQ compares on a re-declare:
// one present on the existing queue but not declared (or the reverse) is a
// PRECONDITION_FAILED too. Other arguments are ignored by the broker.
var equivalenceArgs = []string{
	"x-queue-type", "x-message-ttl", "x-expires", "x-dead-letter-exchange", "x-dead-letter-routing-key",
	"x-dead-letter-strategy", "x-overflow", "x-max-length", "x-max-length-bytes", "x-max-priority",
	"x-delivery-limit", "x-single-active-consumer", "x-max-in-memory-length", "x-max-in-memory-bytes",
}

// diffQueue compares an existing queue with the arguments the pipeline
// declares.
func diffQueue(info broker.QueueInfo, want amqp.Table) []ArgDiff {
	var diffs []ArgDiff
	if !info.Durable {
		diffs = append(diffs, ArgDiff{Arg: "durable", Have: "false", Want: "true"})
	}
	for _, k := range equivalenceArgs {
		w, wok := want[k]
		h, hok := info.Arguments[k]
		if k == "x-queue-type" {
			// A classic queue declared without the argument is equivalent
			// to one declared with x-queue-type=classic (measured on 3.10.8).
			h, hok = info.Type, true
		}
		switch {
		case !wok && !hok:
		case wok && !hok:
			diffs = append(diffs, ArgDiff{Arg: k, Want: argText(w)})
		case !wok && hok:
			diffs = append(diffs, ArgDiff{Arg: k, Have: argText(h)})
		case argText(w) != argText(h):
			diffs = append(diffs, ArgDiff{Arg: k, Have: argText(h), Want: argText(w)})
		}
	}
	return diffs
}

// argText renders an argument value for comparison and messages; integers
// of any width compare equal.
func argText(v any) string {
	if n, ok := asInt(v); ok {
		if _, isString := v.(string); !isString {
			return strconv.FormatInt(n, 10)
		}
	}
	if s, ok := asString(v); ok {
		return s
	}
	return fmt.Sprint(v)
}

// describeArgs is the Detail of a queue: its arguments in a fixed order.
func describeArgs(args amqp.Table) string {
	s := ""
	for _, k := range equivalenceArgs {
		if v, ok := args[k]; ok {
			if s != "" {
				s += " "
			}
			s += k + "=" + argText(v)
		}
	}
	return s
}

// DeclarePipeline connects once (no retries: this is a one-shot command),
// declares the pipeline's topology and disconnects. m may be nil.
func DeclarePipeline(ctx context.Context, opts broker.Options, m *broker.Management, p Pipeline) (Report, error) {
	if opts.Name == "" {
		opts.Name = "parkinglot topology " + p.Name
	}
	conn, err := broker.Dial(ctx, opts)
	if err != nil {
		return Report{}, err
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		return Report{}, fmt.Errorf("open channel: %w", broker.Explain(err))
	}
	defer ch.Close()
	return Declare(ctx, ch, p, DeclareOptions{Server: conn.ServerVersion, Management: m})
}
