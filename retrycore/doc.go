// Package retrycore owns parkinglot's retry contract: the three-tier
// topology a pipeline file declares, the headers a failed message carries,
// and how those headers are read back, whoever wrote them. The daemon that
// writes them lives in retrycore/daemon; replay and the UI read them
// through this package, so the three agree on one rule per header.
//
// # Pipelines and their topology
//
// A [Pipeline] (read by [LoadPipeline] from pipeline.yaml) names a main
// path, a retry path with one TTL delay queue per delay, and an error path
// ending in the parking lot. [Declare] makes sure the exchanges, queues and
// bindings exist and are equivalent to the pipeline: the main queue
// dead-letters to the error exchange, so what the broker drops is parked;
// a delay queue is named <name>.retry.<delay> and dead-letters back to the
// main exchange; the three tiers share one queue type; and a parking lot
// on a quorum queue gets no delivery limit, so browsing it never drops a
// message.
// Declare is idempotent; an existing queue or exchange with other
// arguments is a [*TopologyError] naming each difference, never an
// override.
//
// # The header contract
//
// The daemon writes x-retry-count, x-last-error (one line of at most
// [MaxErrorLen] bytes, see [OneLine]), x-original-exchange,
// x-original-routing-key, x-original-queue, x-first-failed-at, and on the
// park copy x-failure-kind and x-parked-at ([RetryHeaders], [ParkHeaders]).
// A replay writes x-replay-count, x-replayed-at, x-replay-id, x-replay-run
// and x-replayed-error, and gives the copy a fresh budget ([ResetBudget])
// and its true origin ([RecordOrigin]). Counts are written as int32 and
// times as AMQP timestamps; the Header* constants name every key. A copy
// keeps its message's other headers and properties, so its content id
// (broker.ContentID) stays the id the parking lot lists.
//
// # Reading a parked message
//
// [Decode] turns any message's headers into [Facts]: its x-death history
// newest first ([Deaths]), its error text, type and stack, when it failed
// and was parked, whether it came back from a replay, and how many times a
// handler saw it. Besides parkinglot's own headers it reads RabbitMQ's
// dead-lettering and the conventions of Spring AMQP, MassTransit,
// NServiceBus, Rebus, rascal, Celery and the usual x-retry-count loops;
// Facts.AttemptsSource says which rule counted the attempts. Decode never
// fails and never panics, whatever a producer put in the headers: odd
// values are skipped and listed in Facts.Problems. A quorum queue's
// delivery-limit deaths count exactly only with the queue's limit, which
// [DecodeWith] looks up through [NewDeliveryLimits] (the management API,
// cached per queue).
//
// [ResolveOrigin] says where a replay goes, by a fixed order of rules: the
// destination given, the configured default, x-original-* (ours or
// Spring's), rascal's original exchange, the x-death entry of the first
// death (following a delay queue to its dead-letter target), the
// frameworks' failed-queue headers, MassTransit's _error naming. When no
// rule answers it returns [ErrUnknownOrigin]: it never guesses.
//
// [GroupKey] normalises an error text (ids, numbers, times and quoted
// values become placeholders), so failures that differ only in those fall
// into one group in the TUI, in search and in a canary's "same error"
// check.
package retrycore
