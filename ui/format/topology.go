package format

import (
	"fmt"
	"strings"

	"github.com/parkinglot/parkinglot/retrycore"
)

// RemovalPlan says what `topology delete` will do, one line each, and
// what it will keep unless forced.
func RemovalPlan(p retrycore.RemovalPlan, force bool) []string {
	lines := []string{fmt.Sprintf("pipeline %s: will delete", p.Pipeline)}
	for _, q := range p.Queues {
		switch {
		case !q.Exists:
			lines = append(lines, fmt.Sprintf("  queue     %s (%s): not there", Name(q.Name), q.Role))
		case q.Messages > 0 && !force:
			lines = append(lines, fmt.Sprintf("  queue     %s (%s): holds %d message(s): kept (export them first, or --force discards them)", Name(q.Name), q.Role, q.Messages))
		case q.Messages > 0:
			lines = append(lines, fmt.Sprintf("  queue     %s (%s): holds %d message(s): DISCARDED (--force)", Name(q.Name), q.Role, q.Messages))
		case q.Messages < 0:
			lines = append(lines, fmt.Sprintf("  queue     %s (%s): depth unknown; deleted only if empty", Name(q.Name), q.Role))
		default:
			lines = append(lines, fmt.Sprintf("  queue     %s (%s): empty", Name(q.Name), q.Role))
		}
	}
	for _, ex := range p.Exchanges {
		lines = append(lines, fmt.Sprintf("  exchange  %s: unless something else is bound to it", Name(ex)))
	}
	if p.OldDelaysUnknown {
		lines = append(lines, "  (without the management API, delay queues of delays the file no longer lists are not found)")
	}
	return lines
}

// TopologyDetail is a topology report entry's detail for people: what it
// is, and for a removal what was discarded or why it was kept.
func TopologyDetail(e retrycore.ReportEntry) string {
	parts := []string{}
	if e.Detail != "" {
		parts = append(parts, e.Detail)
	}
	if e.Discarded > 0 {
		parts = append(parts, fmt.Sprintf("%d message(s) discarded", e.Discarded))
	}
	switch e.Kept {
	case retrycore.KeptNotEmpty:
		parts = append(parts, "not empty")
	case retrycore.KeptConsumers:
		parts = append(parts, fmt.Sprintf("%d consumer(s): stop them first", e.Consumers))
	case retrycore.KeptBound:
		parts = append(parts, "still bound")
	}
	return strings.Join(parts, ", ")
}
