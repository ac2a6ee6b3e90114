package format

import (
	"fmt"
	"time"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/replay"
)

// Note is a note of a run, a plan or a browse in words.
func Note(n replay.Note) string {
	switch n.Kind {
	case replay.NotePass:
		return PassNote(n.Pass)
	case replay.NoteDelayNotFollowed:
		return errText(n.Err) + " (origins through delay queues are not followed)"
	case replay.NoteReconnect:
		return errText(n.Err) + "; reconnecting and carrying on"
	case replay.NoteResentUnconfirmed:
		return fmt.Sprintf("%s: re-sent after a lost connection and not confirmed (%s); it is parked", n.ID, errText(n.Err))
	case replay.NoteUserIDLeftOut:
		return fmt.Sprintf("user_id %q left out: RabbitMQ only accepts the connection's own user (%q)", n.UserID, n.ConnUser)
	default: // replay.NoteError
		return errText(n.Err)
	}
}

// Notes words each note.
func Notes(ns []replay.Note) []string { return each(ns, Note) }

// PassNote is a browse pass's note in words.
func PassNote(n broker.Note) string {
	switch n.Kind {
	case broker.NoteNoManagement:
		return "no management API: queue type and delivery limit unknown; quorum messages seen redelivered are refreshed before a give-back"
	case broker.NoteManagementFailed:
		return fmt.Sprintf("management API: %s; queue type and delivery limit unknown, quorum messages are protected conservatively", errText(n.Err))
	case broker.NoteQuorumLimit:
		return fmt.Sprintf("quorum queue with delivery limit %d (%s): messages within one give-back of it are refreshed (re-published, confirmed) instead of given back",
			n.Limit.Limit, n.Limit.Source)
	case broker.NoteOrderNotKept:
		return fmt.Sprintf("the pass ended early and could not hold the rest of the queue to keep its order (%s); the %d message(s) looked at may now be at the back", errText(n.Err), n.Count)
	case broker.NoteGiveBackSlow:
		return fmt.Sprintf("the quorum queue did not take back %d given-back message(s) within %v; the rest were given back at once, and their order may have changed", n.Count, n.Wait)
	case broker.NoteAcksPending:
		return fmt.Sprintf("the quorum queue had not applied every ack after %v (%d ready, %d expected); some removed messages may come back as duplicates", n.Wait, n.Count, n.Expected)
	case broker.NoteMadeSafe:
		return fmt.Sprintf("%d message(s) were one lost connection from deletion (x-delivery-count up to %d, delivery limit %d: %s; RabbitMQ 4.3 carries the count into a parking lot): made safe, re-published to the queue's tail without the count; their facts are unchanged (parkinglot protect QUEUE lifts the limit for good)",
			n.Count, n.DeliveryCount, n.Limit.Limit, n.Limit.Source)
	case broker.NoteDelayedRetry:
		return DelayedRetryNote(n.Delayed, n.Count, n.Wait)
	case broker.NoteOtherConsumers:
		return fmt.Sprintf("the queue had %d other consumer(s) (a service, a replay, a browse or a watch's scan): messages they held were not seen by this pass", n.Count)
	default: // broker.NoteRefreshFailed
		return errText(n.Err)
	}
}

// PassNotes words each note of a pass.
func PassNotes(ns []broker.Note) []string { return each(ns, PassNote) }

// each words every note of ns (nil for none).
func each[N any](ns []N, word func(N) string) []string {
	if len(ns) == 0 {
		return nil
	}
	out := make([]string, len(ns))
	for i, n := range ns {
		out[i] = word(n)
	}
	return out
}

// errText is an error's text, "" for none (a note always has one; this
// keeps a malformed one from panicking).
func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// DelayedRetryNote says what a queue's delayed retry means for what a
// person sees of it: delayed messages are in no count and no browse.
// waited is how long the pass waited for them before it began.
func DelayedRetryNote(d broker.DelayedRetry, delayed int, waited time.Duration) string {
	line := fmt.Sprintf("delayed retry %s (%s, %s): a message given back is hidden for the delay", d.Type, DelayRange(d), d.Source)
	if d.DelaysNack() {
		line += "; this pass re-published what it looked at instead of giving it back"
	}
	switch {
	case delayed > 0 && waited > 0:
		line += fmt.Sprintf("; %d message(s) were held back: the pass waited %v for them to return first", delayed, waited)
	case delayed > 0 && d.Longest() > 0:
		line += fmt.Sprintf("; %d message(s) were held back when it began and are not shown: they return within %v", delayed, d.Longest())
	case delayed > 0:
		line += fmt.Sprintf("; %d message(s) were held back when it began and are not shown", delayed)
	}
	return line
}

// DelayRange is a delayed retry's delay: "5s", "5s–1m0s", or "no delay set".
func DelayRange(d broker.DelayedRetry) string {
	switch {
	case d.Min == 0 && d.Max == 0:
		return "delay unset"
	case d.Max == 0 || d.Max == d.Min:
		return d.Min.String()
	}
	return d.Min.String() + "–" + d.Max.String()
}
