package daemon

import (
	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/retrycore"
)

// copyPublishing is the message as it is published to the retry or error
// exchange: every property kept but expiration (a copy must not expire on
// its way through a delay queue), a user_id other than ours (the broker
// refuses a publish whose user_id is not the connection's user, which
// would requeue the message forever) and the delivery mode, made
// persistent so that a broker restart cannot drop the copy from a classic
// queue (its headers record the producer's: retrycore.CopyDeliveryMode).
func copyPublishing(m broker.Message, headers amqp.Table, user string) amqp.Publishing {
	pub := m.Publishing()
	pub.Headers = headers
	pub.Expiration = ""
	pub.DeliveryMode = retrycore.CopyDeliveryMode
	if pub.UserId != user {
		pub.UserId = ""
	}
	return pub
}
