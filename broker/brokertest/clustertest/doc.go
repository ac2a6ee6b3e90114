// Package clustertest controls the brokers under test from outside the
// client: the three nodes of `make cluster` (stop, start, find a queue's
// leader or a connection's node), rabbitmqctl on the single broker (restart
// its app, raise a memory alarm), and a proxy between client and broker
// that drops or holds frames ([FaultProxy]).
package clustertest
