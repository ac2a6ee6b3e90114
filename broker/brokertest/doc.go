// Package brokertest holds fixtures for tests against the real RabbitMQ:
// connections that fail the test loudly when the broker is missing, unique
// names, queues and exchanges deleted when the test ends, publishing and
// draining, waits for a condition ([Eventually], [Poll], [WaitDepth]),
// and users, vhosts and policies through the management API.
//
// The benchmark harness is in [github.com/parkinglot/parkinglot/broker/brokertest/benchtest],
// control of the brokers (cluster nodes, rabbitmqctl, a fault proxy) in
// [github.com/parkinglot/parkinglot/broker/brokertest/clustertest], and a
// runner of the parkinglot binary in
// [github.com/parkinglot/parkinglot/ui/cli/clitest].
package brokertest
