package retrycore

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker"
)

// ArgDiff is one argument in which an existing queue or exchange differs
// from the pipeline. An empty Have or Want means "not set".
type ArgDiff struct {
	Arg  string `json:"arg"`
	Have string `json:"have,omitempty"`
	Want string `json:"want,omitempty"`
}

func (d ArgDiff) String() string {
	switch {
	case d.Have == "":
		return fmt.Sprintf("without %s but the pipeline wants %s", d.Arg, d.Want)
	case d.Want == "":
		return fmt.Sprintf("with %s=%s but the pipeline does not set it", d.Arg, d.Have)
	}
	return fmt.Sprintf("with %s=%s but the pipeline wants %s", d.Arg, d.Have, d.Want)
}

// TopologyError says that a queue or exchange exists with arguments other
// than the pipeline's, and which. It wraps broker.ErrPreconditionFailed.
type TopologyError struct {
	Kind  string // exchange | queue
	Name  string
	Diffs []ArgDiff
}

func (e *TopologyError) Error() string {
	parts := make([]string, len(e.Diffs))
	for i, d := range e.Diffs {
		parts[i] = d.String()
	}
	return fmt.Sprintf("%s %q exists %s (delete the %s or change the pipeline)", e.Kind, e.Name, strings.Join(parts, ", and "), e.Kind)
}

// Unwrap lets errors.Is(err, broker.ErrPreconditionFailed) match.
func (e *TopologyError) Unwrap() error { return broker.ErrPreconditionFailed }

// TopologyErrors is more than one TopologyError, found through the
// management API before anything was declared.
type TopologyErrors struct{ Errors []*TopologyError }

func (e *TopologyErrors) Error() string {
	parts := make([]string, len(e.Errors))
	for i, te := range e.Errors {
		parts[i] = te.Error()
	}
	return strings.Join(parts, "; ")
}

// Unwrap returns the individual errors.
func (e *TopologyErrors) Unwrap() []error {
	out := make([]error, len(e.Errors))
	for i, te := range e.Errors {
		out[i] = te
	}
	return out
}

// inequivalent matches RabbitMQ's PRECONDITION_FAILED text, e.g.
// "inequivalent arg 'x-queue-type' for queue 'q' in vhost '/': received the
// value 'quorum' of type 'longstr' but current is none".
var inequivalent = regexp.MustCompile(`inequivalent arg '([^']+)' for (queue|exchange) '((?:[^']|'')*)' in vhost '[^']*': received (.*) but current is (.*)$`)

var argValue = regexp.MustCompile(`^the value '(.*)' of type '[^']*'$`)

// explainDeclare turns a declare failure into a TopologyError when the
// broker said which argument differs, or a worded error otherwise.
func explainDeclare(kind, name string, err error) error {
	var ae *amqp.Error
	if errors.As(err, &ae) && ae.Code == amqp.PreconditionFailed {
		if d, ok := parseInequivalent(ae.Reason); ok {
			if d.Arg == "x-queue-type" && d.Have == "" {
				d.Have = QueueClassic // a queue declared without a type is classic
			}
			return &TopologyError{Kind: kind, Name: name, Diffs: []ArgDiff{d}}
		}
	}
	return fmt.Errorf("declare %s %q: %w", kind, name, broker.Explain(err))
}

// parseInequivalent reads the differing argument out of a 406 reason.
func parseInequivalent(reason string) (ArgDiff, bool) {
	m := inequivalent.FindStringSubmatch(strings.TrimSpace(reason))
	if m == nil {
		return ArgDiff{}, false
	}
	return ArgDiff{Arg: m[1], Want: brokerValue(m[4]), Have: brokerValue(m[5])}, true
}

// brokerValue reads "none", "the value 'x' of type 't'" or "'x'".
func brokerValue(s string) string {
	s = strings.TrimSpace(s)
	if s == "none" {
		return ""
	}
	if m := argValue.FindStringSubmatch(s); m != nil {
		return m[1]
	}
	return strings.Trim(s, "'")
}
