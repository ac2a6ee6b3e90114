package format

import (
	"fmt"
	"strings"

	"github.com/parkinglot/parkinglot/replay"
)

// RouteLine is a route preview in one line: "→ main.exchange /
// payment.execute → reaches payment.main.queue".
func RouteLine(r replay.RoutePreview) string {
	head := "→ " + r.Destination.String()
	if e := RouteError(r); e != "" {
		return head + " → " + e
	}
	if r.Unroutable {
		return head + " → unroutable"
	}
	line := head + " → reaches " + strings.Join(r.Queues, ", ")
	if len(r.CCQueues) > 0 {
		line += " (" + strings.Join(r.CCQueues, ", ") + " through CC/BCC)"
	}
	return line
}

// RouteError is why a route could not be previewed, or that its exchange
// is missing; "" when it was previewed.
func RouteError(r replay.RoutePreview) string {
	switch {
	case r.NoExchange:
		return fmt.Sprintf("exchange %q does not exist in vhost %q", r.Destination.Exchange, r.Vhost)
	case r.Unavailable != nil:
		return "route preview unavailable: " + r.Unavailable.Error()
	case !r.Available:
		return "route preview unavailable"
	}
	return ""
}

// RouteWarning is what a person should know before sending along the
// route (replay.RoutePreview.Warns), "" when nothing.
func RouteWarning(r replay.RoutePreview) string {
	if !r.Warns() {
		return ""
	}
	var w string
	switch {
	case r.NoExchange:
		w = RouteError(r) + ": the messages would stay parked"
	case r.Unroutable:
		w = fmt.Sprintf("unroutable: no queue is bound to %s; the messages would stay parked", r.Destination)
	case len(r.OtherQueues()) > 0:
		w = fmt.Sprintf("also reaches other queues than the one that failed (%s): %s — other consumers would get the messages again",
			strings.Join(r.FailedQueues, ", "), strings.Join(r.OtherQueues(), ", "))
	case len(r.FailedQueues) == 0 && len(r.Queues) > 1:
		w = fmt.Sprintf("reaches %d queues (%s): every consumer of them gets the messages again", len(r.Queues), strings.Join(r.Queues, ", "))
	}
	if len(r.CCQueues) > 0 && !r.NoExchange {
		cc := fmt.Sprintf("the CC/BCC header the messages keep (%s) also routes them to %s", strings.Join(r.CC, ", "), strings.Join(r.CCQueues, ", "))
		if w == "" {
			return cc
		}
		return cc + "; " + w
	}
	return w
}

// WordRoute fills in a route preview's Err and Warning, for -o json.
func WordRoute(r replay.RoutePreview) replay.RoutePreview {
	r.Err, r.Warning = RouteError(r), RouteWarning(r)
	return r
}
