// Package daemon is parkinglot's consumer daemon: it consumes a pipeline's
// main queue, hands each message to a handler, and retries or parks what
// fails, writing the header contract of package retrycore on every copy.
//
// # The loop
//
// [Run] declares the pipeline's topology (retrycore.Declare), consumes the
// main queue with the pipeline's prefetch and hands each delivery to one of
// Concurrency workers. A [Handler] returns nil (done: ack), an error
// wrapped with [Permanent] (park at once), or any other error, a panic or
// the handler timeout (retry). [Classify] turns that and the retries done
// (retrycore.RetriesDone) into a [Outcome]: a retry goes to the delay tier
// of its number, the last tier repeating, and after max_retries the
// message is parked as retries-exhausted. [Serve] is the `parkinglot
// daemon` process around Run: it builds an [ExecHandler] or an
// [HTTPHandler] and serves the [Metrics] with /livez and /readyz.
//
// # Guarantees
//
// A message leaves the main queue only after the broker confirmed its
// retry or park copy where it is going: each copy is published mandatory
// on a confirm-mode channel, and the original is acked once the copy is
// confirmed and routed. A copy that is returned, nacked (broker.ErrNacked),
// not confirmed in time or held by a resource alarm gives the original
// back instead, after a backoff that grows with consecutive failures. A
// failure can therefore duplicate a message, never lose one. Attempts are
// counted on the message (x-retry-count), never in memory, so several
// daemons can share a queue and a restart forgets nothing.
//
// Consuming and publishing use two connections, named after the pipeline,
// so a resource alarm that blocks publishers does not hold back acks. A
// lost connection ends the session: the loop reconnects with a backoff and
// redeclares the topology; a bad URL or credentials, refused access, a
// topology that differs from the pipeline or a broker of another cluster
// than the management API's stop it with an error instead.
//
// On cancellation the loop starts nothing more, lets the handlers in
// flight finish (their context is not cancelled), sends their acks,
// cancels its consumer, whose answer means the broker applied those acks,
// and gives back in one frame what it held unstarted. Acks of one channel
// are coalesced into one multiple ack for the longest settled prefix, so
// a slow message never holds back the others'.
//
// # Handlers
//
// An exec handler runs a command per message, with no shell: the body on
// stdin, the message id, routing key, attempt and headers
// ([PlainHeaders]) in PARKINGLOT_* variables, the daemon's own connection
// settings left out. Exit 0 is done, [ExitPermanent] (65) parks, anything
// else retries; the last line of its stderr is the error, and on the
// timeout its whole process group is killed. An HTTP handler POSTs the body
// with the same facts in X-Parkinglot-* headers: 2xx is done, 4xx other
// than 408 and 429 parks, anything else retries.
package daemon
