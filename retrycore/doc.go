// Package retrycore owns the three-tier retry topology and its header
// contract, and runs the consumer daemon.
//
// It holds two things, in files named after them:
//
//   - The contract, read by replay and the UI as well: the pipeline file
//     and the topology it declares (pipeline.go, topology.go), the headers
//     the daemon writes (headers.go, retry_headers.go), the decoding of a
//     parked message into [Facts] — RabbitMQ's x-death and the frameworks'
//     own headers (death.go, facts.go, frameworks.go) —, where a replay goes
//     ([ResolveOrigin], origin.go), and the normalised error group
//     ([GroupKey], group.go).
//   - The daemon: [Run] consumes the main queue and hands each message to a
//     [Handler] (an exec command or an HTTP endpoint; handler*.go),
//     classifies the outcome (classify.go), and publishes a retry or park
//     copy, mandatory and confirmed, before it acks the original
//     (worker.go, publish.go, confirms.go, acker.go); consumer.go and
//     session.go hold the loop across reconnects, daemon.go and metrics.go
//     its process and Prometheus metrics.
//
// A message leaves the main queue only after the broker confirmed its copy
// where it is going; attempts are counted on the message (x-retry-count),
// never in memory, so several daemons can share a queue.
package retrycore
