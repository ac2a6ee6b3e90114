package broker

import "time"

// DefaultConsumerTimeout is RabbitMQ's consumer_timeout when nothing else
// is set (30 minutes since 3.8.15): a delivery held unacknowledged longer
// ends its consumer (a channel closed, or from 4.3 a quorum consumer
// cancelled).
const DefaultConsumerTimeout = 30 * time.Minute

// QueueConsumerTimeout is a queue's own consumer timeout: the
// x-consumer-timeout argument, else the consumer-timeout policy key, in
// milliseconds (3.12+; 0 when neither is set).
func QueueConsumerTimeout(q QueueInfo) time.Duration {
	for _, v := range []any{q.Arguments["x-consumer-timeout"], q.EffectivePolicy["consumer-timeout"]} {
		if n, ok := toInt64(v); ok && n > 0 {
			return time.Duration(n) * time.Millisecond
		}
	}
	return 0
}
