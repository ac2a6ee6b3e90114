package format

import (
	"errors"
	"testing"
	"time"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/replay"
)

// TestNote: each kind of note in words, as the CLI has always printed it.
func TestNote(t *testing.T) {
	boom := errors.New("boom")
	limit := broker.DeliveryLimit{Limit: 20, Source: "x-delivery-limit argument"}
	pass := func(n broker.Note) replay.Note { return replay.Note{Kind: replay.NotePass, Pass: n} }
	for _, c := range []struct {
		note replay.Note
		want string
	}{
		{replay.Note{Kind: replay.NoteError, Err: boom}, "boom"},
		{replay.Note{Kind: replay.NoteDelayNotFollowed, Err: boom}, "boom (origins through delay queues are not followed)"},
		{replay.Note{Kind: replay.NoteReconnect, Err: boom}, "boom; reconnecting and carrying on"},
		{replay.Note{Kind: replay.NoteResentUnconfirmed, ID: "m-1", Err: boom}, "m-1: re-sent after a lost connection and not confirmed (boom); it is parked"},
		{replay.Note{Kind: replay.NoteUserIDLeftOut, UserID: "bob", ConnUser: "guest"}, `user_id "bob" left out: RabbitMQ only accepts the connection's own user ("guest")`},
		{pass(broker.Note{Kind: broker.NoteNoManagement}),
			"no management API: queue type and delivery limit unknown; quorum messages seen redelivered are refreshed before a give-back"},
		{pass(broker.Note{Kind: broker.NoteManagementFailed, Err: boom}),
			"management API: boom; queue type and delivery limit unknown, quorum messages are protected conservatively"},
		{pass(broker.Note{Kind: broker.NoteQuorumLimit, Limit: limit}),
			"quorum queue with delivery limit 20 (x-delivery-limit argument): messages within one give-back of it are refreshed (re-published, confirmed) instead of given back"},
		{pass(broker.Note{Kind: broker.NoteOrderNotKept, Err: boom, Count: 7}),
			"the pass ended early and could not hold the rest of the queue to keep its order (boom); the 7 message(s) looked at may now be at the back"},
		{pass(broker.Note{Kind: broker.NoteGiveBackSlow, Count: 500, Wait: 5 * time.Second}),
			"the quorum queue did not take back 500 given-back message(s) within 5s; the rest were given back at once, and their order may have changed"},
		{pass(broker.Note{Kind: broker.NoteAcksPending, Wait: 5 * time.Second, Count: 3, Expected: 4}),
			"the quorum queue had not applied every ack after 5s (3 ready, 4 expected); some removed messages may come back as duplicates"},
		{pass(broker.Note{Kind: broker.NoteRefreshFailed, Err: boom}), "boom"},
		{pass(broker.Note{Kind: broker.NoteDelayedRetry, Count: 3, Wait: 5 * time.Second, Delayed: delayed(5 * time.Second)}),
			"delayed retry all (5s, policy p): a message given back is hidden for the delay; this pass re-published what it looked at instead of giving it back; 3 message(s) were held back: the pass waited 5s for them to return first"},
		{pass(broker.Note{Kind: broker.NoteDelayedRetry, Count: 3, Delayed: delayed(time.Minute)}),
			"delayed retry all (1m0s, policy p): a message given back is hidden for the delay; this pass re-published what it looked at instead of giving it back; 3 message(s) were held back when it began and are not shown: they return within 1m0s"},
	} {
		if got := Note(c.note); got != c.want {
			t.Errorf("Note(%+v)\n got  %q\n want %q", c.note, got, c.want)
		}
	}
	if got := Notes(nil); got != nil {
		t.Errorf("Notes(nil) = %q, want nil", got)
	}
}

func delayed(d time.Duration) broker.DelayedRetry {
	return broker.DelayedRetry{Type: "all", Min: d, Max: d, Source: "policy p"}
}
