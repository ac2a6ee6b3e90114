package retrycore

import (
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker"
)

// Every header retrycore writes on a retry or park copy, and every header
// of the contract that replay or the broker adds on the way, is one the
// content id leaves out (broker.IsTransitHeader): the id the daemon logs is
// the id the parking lot lists.
func TestHeadersAddedOnTheWayAreLeftOutOfTheContentID(t *testing.T) {
	in := amqp.Table{"tenant": "acme"}
	// A transient delivery: its copies gain x-original-delivery-mode too.
	f := Failure{Exchange: "orders", RoutingKey: "order.new", Queue: "orders.main", Err: "db down", DeliveryMode: amqp.Transient}
	now := time.Unix(1764806707, 0)
	for name, h := range map[string]amqp.Table{
		"retry": RetryHeaders(in, f, 1, now),
		"park":  ParkHeaders(in, f, 3, KindRetriesExhausted, now),
	} {
		for k := range h {
			if _, kept := in[k]; !kept && !broker.IsTransitHeader(k) {
				t.Errorf("the %s copy gains %s, which the content id counts", name, k)
			}
		}
		if broker.ContentID(nil, h) != broker.ContentID(nil, in) {
			t.Errorf("the %s copy has another content id than the message first handled", name)
		}
	}
	for _, k := range []string{
		HeaderRetryCount, HeaderLastError, HeaderOriginalExchange, HeaderOriginalRoutingKey, HeaderOriginalQueue,
		HeaderOriginalDeliveryMode, HeaderFirstFailedAt, HeaderParkedAt, HeaderFailureKind, HeaderReplayCount, HeaderReplayedAt, HeaderReplayID,
		HeaderDeath, HeaderFirstDeathQueue, HeaderFirstDeathReason, HeaderFirstDeathExchange,
		HeaderLastDeathQueue, HeaderLastDeathReason, HeaderLastDeathExchange, HeaderDeliveryCount, HeaderAcquiredCount,
	} {
		if !broker.IsTransitHeader(k) {
			t.Errorf("%s changes on the way but counts in the content id", k)
		}
	}
}
