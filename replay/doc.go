// Package replay acts on parked messages: it browses parking lots, sends
// messages back where they came from (confirmed, mandatory, pipelined),
// edits, deletes, exports and imports them, and keeps an audit log of every
// removal.
//
// # What a replay sends
//
// A parked message is removed only after the broker confirmed a routed
// copy and the message's audit entry is on disk; an unroutable, nacked or
// unconfirmed copy leaves it parked. The copy ([Transform]) gets a fresh
// retry budget in every convention parkinglot reads, so the consumer
// treats it as new, and the replay headers (x-replay-count, x-replayed-at,
// x-replay-id, x-replay-run, x-replayed-error), so that a copy that is
// parked again can be told apart and compared with the error it had. A
// copy sent to the failed queue alone ([TargetQueue]) records the origin
// it resolved, or its next failure would resolve to that queue, and loses
// its CC and BCC headers, which would route it to other queues too.
//
// # Identity
//
// Several messages may share an id: identical messages without a
// message_id share a content id, and an export imported twice leaves two
// copies of one message_id. A selection by id chooses every message that
// carries it, so a pass by id reads the whole queue, and a summary counts
// each message.
//
// # Canary replays and runs
//
// Every replay is a run ([NewRunID]) whose id every copy carries in
// x-replay-run and every audit entry in "run". [Session.Canary] replays a
// selection in steps and, between steps, watches the parking lot for the
// copies' x-replay-ids with a harmless browse; nothing is in flight during
// the wait, so a cancelled wait leaves every message replayed or parked.
// [Session.RunStatus] reads a run back from the audit log and the parking
// lots.
//
// # Clusters
//
// A quorum queue is served by a leader that needs a majority of its
// members; without one its messages are safe on disk but can be neither
// read nor published to, and the broker neither confirms nor refuses a
// publish to it, nor answers a close. A run therefore gives up after
// [DefaultConfirmTimeout] without a confirm, reports the copies in flight
// as of unknown outcome (the messages stay parked), and drops its
// publishing connection rather than close it.
package replay
