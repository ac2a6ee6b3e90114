// Package broker is parkinglot's way to RabbitMQ: connections and the URL
// lists of a cluster, the management API, the lossless message model and
// its JSON form, routing previews, and the browse pass.
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
//
// # Browsing without harm
//
// AMQP 0-9-1 has no peek. A [Pass] consumes with manual acks, holds what it
// reads and gives it back with one basic.nack(multiple, requeue), never by
// closing the channel (which counts against quorum delivery limits). It
// learns a quorum queue's effective delivery limit from the management API
// and refreshes (re-publishes to the tail, confirmed) a message a give-back
// would bring within one delivery of the limit. A classic queue is read in
// segments of one consumer's prefetch each, because RabbitMQ 4.3 applies a
// global prefetch per consumer. Acks are pipelined as the contiguous
// prefix of the deliveries, and the channel stays open until the broker
// applied them. A pass that ends early on a quorum queue holds the rest
// and gives everything back at once, and before 4.0 a quorum queue that
// may have a delivery limit gets its give-back 32 messages at a time, so
// the queue keeps its order (browse_order.go). What differs by version is
// asserted, one behaviour a test on every version, by versions_test.go.
//
// # Messages
//
// [Message] keeps every property and header with its AMQP type; its JSON
// form round-trips them exactly (export, import, show -o json). A message
// is known by its message_id, a Celery task id, or a content id
// ("sha256:" + 12 hex digits) over what does not change on its way.
//
// Errors callers decide on are sentinels ([ErrNotFound], [ErrAccessRefused],
// [ErrNacked], …) carried by [Explain]'s *Error.
package broker
