// Package broker is parkinglot's way to RabbitMQ: connections and the URL
// lists of a cluster, the management API, the lossless message model and
// its JSON form, routing previews, and the browse pass. It returns data
// and errors callers decide on, and leaves the wording of advice to the
// UI; retrycore, replay and the UI build on it.
//
// # Connections
//
// [Dial] takes one URL or a comma list of a cluster's nodes; the first
// dial of a process starts at a random node and tries the others in order,
// later dials start where the last one answered, and after a loss with the
// node after the lost one. Passwords never appear in an error or a log line
// ([Redact]). Every cancel and close waits at most [CloseWait], then drops
// the socket: a node whose quorum queues lost their majority answers
// neither, and the broker gives back what a dropped connection held.
// [Redial] dials until it succeeds, with a [Backoff], unless the error is
// [Permanent] (a bad URL or credentials). Every connection is named
// ([Options].Name), so an operator can tell parkinglot's in the management
// UI.
//
// # The management API
//
// [Management] is a small client of RabbitMQ's management HTTP API, scoped
// to one vhost: queues and their effective delivery limits
// ([EffectiveDeliveryLimit]), exchanges, bindings, nodes and connections,
// shovels and policies. It may know several nodes of one cluster and asks
// the next when one does not answer. [CheckManagement] makes sure the API
// and the AMQP connection belong to the same cluster, else
// [ErrManagementMismatch]; features that need the API and do not have it
// fail with [ErrNoManagement]. [Management.PreviewRoute] says which queues
// a publish would reach, from the bindings, without publishing.
//
// # Browsing without harm
//
// AMQP 0-9-1 has no peek. A [Pass] consumes with manual acks, holds what it
// reads and gives it back: a quorum queue with basic.nack(multiple,
// requeue), never by closing the channel (which counts against quorum
// delivery limits); a classic queue, which has no limit, by closing it. It
// learns a quorum queue's effective delivery limit from the management API
// and refreshes (re-publishes to the tail, confirmed) a message a give-back
// would bring within one delivery of the limit. A pass larger than one
// consumer's prefetch is read in segments of one prefetch each, because
// RabbitMQ 4.3 applies a global prefetch per consumer and a quorum queue
// without a prefetch stops at 2,000 unsettled deliveries. Acks are
// pipelined as the contiguous prefix of the deliveries, and the channel
// stays open until the broker applied them. A pass that ends early on a
// quorum queue holds the rest and gives everything back; a quorum give-back
// goes a segment at a time, and before 4.0, on a queue that may have a
// delivery limit, 32 messages at a time, so the queue keeps its order. A
// pass to which the broker sends nothing although messages are ready (a
// stream, or a queue whose single active consumer is another) ends with
// [ErrStalled]. What differs by RabbitMQ
// version is asserted, version by version, by the package's tests.
//
// # Messages
//
// [Message] keeps every property and header with its AMQP type; its JSON
// form round-trips them exactly (export, import, show -o json). A message
// is known by its message_id, a Celery task id, or a content id
// ("sha256:" + 12 hex digits) over what does not change on its way.
//
// # Errors
//
// Errors callers decide on are sentinels matched with errors.Is:
// [Explain] maps an AMQP channel or connection error to an [*Error] that
// carries [ErrNotFound], [ErrAccessRefused], [ErrPreconditionFailed],
// [ErrResourceLocked] or [ErrQueueDown] by its reply code. [ErrNacked] is
// the one error for a publish the broker refused with basic.nack, for the
// daemon's retry copies and the replay's copies alike; the original then
// stays where it was.
package broker
