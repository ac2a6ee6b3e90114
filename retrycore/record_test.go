//go:build integration

package retrycore

import (
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/broker/brokertest"
)

// recordFlag turns TestRecord on: go test ./retrycore -run TestRecord -record
var recordFlag = flag.Bool("record", false, "TestRecord: record parked deliveries from the local broker into testdata/recorded")

// TestRecord is a tool, not a test: with -record it builds each scenario's
// topology on the local RabbitMQ under unique names, drives a message
// through it with a small Go consumer that behaves like the framework or
// seed consumer named, takes the parked delivery and writes it to
// testdata/recorded. Without -record it is skipped — the one skip in the
// suite; the decoder tests read the committed files and need no broker.
func TestRecord(t *testing.T) {
	if !*recordFlag {
		t.Skip("a recording tool: run with -record to refresh testdata/recorded")
	}
	if err := os.MkdirAll(recordedDir, 0o755); err != nil {
		t.Fatal(err)
	}
	scenarios := []struct {
		name string
		run  func(t *testing.T, s *studio) recording
	}{
		{"seed1-republish", recordSeed1},
		{"seed2-nack-ttl", recordSeed2},
		{"spring-republish", recordSpring},
		{"masstransit-error", recordMassTransit},
		{"retrycore-contract", recordContract},
		{"all-types", recordAllTypes},
		{"quorum-browsed", recordQuorumBrowsed},
	}
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			s := newStudio(t)
			r := sc.run(t, s)
			r.Scenario = sc.name
			s.write(t, r)
		})
	}
}

// studio builds one scenario's topology on the broker and remembers the
// unique names it used, so the recording can be renamed back.
type studio struct {
	conn    *broker.Conn
	ch      *amqp.Channel // declarations and consuming
	pub     *amqp.Channel // confirmed publishing
	unique  map[string]string
	topo    recordedTopology
	queueTb map[string]amqp.Table
}

func newStudio(t *testing.T) *studio {
	t.Helper()
	conn := brokertest.Dial(t, "parkinglot-recorder "+t.Name())
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	pub, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	return &studio{
		conn: conn, ch: ch, pub: pub,
		unique:  map[string]string{},
		topo:    recordedTopology{Exchanges: map[string]string{}, Queues: map[string]json.RawMessage{}},
		queueTb: map[string]amqp.Table{},
	}
}

// name returns the unique broker name standing for a seed name.
func (s *studio) name(t *testing.T, seed string) string {
	t.Helper()
	for u, sd := range s.unique {
		if sd == seed {
			return u
		}
	}
	u := brokertest.Name(t, seed)
	s.unique[u] = seed
	return u
}

func (s *studio) exchange(t *testing.T, seed, kind string) string {
	t.Helper()
	n := s.name(t, seed)
	brokertest.DeclareExchange(t, s.ch, n, kind)
	s.topo.Exchanges[seed] = kind
	return n
}

func (s *studio) queue(t *testing.T, seed string, args amqp.Table) string {
	t.Helper()
	n := s.name(t, seed)
	brokertest.DeclareQueue(t, s.ch, n, args)
	s.queueTb[seed] = args
	return n
}

func (s *studio) bind(t *testing.T, queue, exchange, key string) {
	t.Helper()
	if err := s.ch.QueueBind(queue, key, exchange, false, nil); err != nil {
		t.Fatalf("bind %s to %s/%s: %v", queue, exchange, key, err)
	}
	s.topo.Bindings = append(s.topo.Bindings, recordedBinding{Exchange: exchange, RoutingKey: key, Queue: queue})
}

func (s *studio) flow(format string, args ...any) {
	s.topo.Flow = append(s.topo.Flow, fmt.Sprintf(format, args...))
}

func (s *studio) publish(t *testing.T, exchange, key string, p amqp.Publishing) {
	t.Helper()
	brokertest.Publish(t, s.pub, exchange, key, p)
}

// consume starts a manual-ack consumer on queue.
func (s *studio) consume(t *testing.T, queue string) <-chan amqp.Delivery {
	t.Helper()
	ch, err := s.conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	if err := ch.Qos(1, 0, false); err != nil {
		t.Fatal(err)
	}
	d, err := ch.Consume(queue, "", false, false, false, false, nil)
	if err != nil {
		t.Fatalf("consume %s: %v", queue, err)
	}
	return d
}

// recordTimeout bounds each scenario; the slowest takes three 1 s delays.
const recordTimeout = 60 * time.Second

// drive feeds deliveries from work to handle until one arrives on parked,
// which it acks and returns.
func drive(t *testing.T, work, parked <-chan amqp.Delivery, handle func(d amqp.Delivery)) amqp.Delivery {
	t.Helper()
	deadline := time.After(recordTimeout)
	for {
		select {
		case d, ok := <-work:
			if !ok {
				t.Fatal("work consumer closed")
			}
			handle(d)
		case d, ok := <-parked:
			if !ok {
				t.Fatal("parking-lot consumer closed")
			}
			if err := d.Ack(false); err != nil {
				t.Fatal(err)
			}
			return d
		case <-deadline:
			t.Fatalf("no parked message within %s", recordTimeout)
		}
	}
}

func ack(t *testing.T, d amqp.Delivery) {
	t.Helper()
	if err := d.Ack(false); err != nil {
		t.Fatal(err)
	}
}

// withHeaders copies a delivery into a publishing, as a consumer that
// republishes does, with extra headers set.
func withHeaders(d amqp.Delivery, set amqp.Table) amqp.Publishing {
	p := broker.FromDelivery(d).Clone().Publishing()
	if p.Headers == nil {
		p.Headers = amqp.Table{}
	}
	for k, v := range set {
		p.Headers[k] = v
	}
	return p
}

const paymentBody = `{"payment_id":"pay-7f3a","amount":"42.00","currency":"EUR"}`

// seed1Topology is the seed's Go consumer topology: main, retry and error
// exchanges, one TTL delay queue that dead-letters back to main.
func seed1Topology(t *testing.T, s *studio) (mainEx, retryEx, errorEx, mainQ, delayQ, parkQ string) {
	t.Helper()
	mainEx = s.exchange(t, "main.exchange", "direct")
	retryEx = s.exchange(t, "retry.exchange", "direct")
	errorEx = s.exchange(t, "error.exchange", "direct")
	mainQ = s.queue(t, "payment.main.queue", nil)
	delayQ = s.queue(t, "payment.retry.1s", amqp.Table{
		"x-message-ttl":             int32(1000),
		"x-dead-letter-exchange":    mainEx,
		"x-dead-letter-routing-key": "payment.execute",
	})
	parkQ = s.queue(t, "payment.error.dlq", nil)
	s.bind(t, mainQ, mainEx, "payment.execute")
	s.bind(t, delayQ, retryEx, "payment.retry")
	s.bind(t, parkQ, errorEx, "payment.error")
	return
}

// runRepublishLoop drives the seed-1 style loop: the consumer fails every
// attempt, republishes to the retry exchange with x-retry-count+1 (int32)
// until 3 retries are done, then publishes to the error exchange. extra
// adds the headers a richer consumer writes (retry: false) or parks with
// (park: true).
func runRepublishLoop(t *testing.T, s *studio, extra func(d amqp.Delivery, park bool, retries int32) amqp.Table) amqp.Delivery {
	t.Helper()
	mainEx, retryEx, errorEx, mainQ, _, parkQ := seed1Topology(t, s)
	work, parked := s.consume(t, mainQ), s.consume(t, parkQ)
	s.publish(t, mainEx, "payment.execute", amqp.Publishing{
		ContentType: "application/json", DeliveryMode: amqp.Persistent, Body: []byte(paymentBody),
	})
	s.flow("producer publishes to main.exchange / payment.execute → payment.main.queue")
	return drive(t, work, parked, func(d amqp.Delivery) {
		var n int32
		if v, ok := d.Headers[HeaderRetryCount].(int32); ok {
			n = v
		}
		errText := fmt.Sprintf("payment gateway timeout after 5000 ms (attempt %d)", n+1)
		if n < 3 {
			set := amqp.Table{HeaderRetryCount: n + 1, HeaderLastError: errText}
			for k, v := range extra(d, false, n+1) {
				set[k] = v
			}
			s.publish(t, retryEx, "payment.retry", withHeaders(d, set))
			s.flow("attempt %d fails: consumer republishes to retry.exchange / payment.retry with x-retry-count=%d (int32), acks; payment.retry.1s expires it back to main.exchange / payment.execute", n+1, n+1)
		} else {
			set := amqp.Table{HeaderLastError: errText}
			for k, v := range extra(d, true, n) {
				set[k] = v
			}
			s.publish(t, errorEx, "payment.error", withHeaders(d, set))
			s.flow("attempt %d fails with x-retry-count=3: consumer publishes to error.exchange / payment.error → payment.error.dlq, acks", n+1)
		}
		ack(t, d)
	})
}

func recordSeed1(t *testing.T, s *studio) recording {
	d := runRepublishLoop(t, s, func(amqp.Delivery, bool, int32) amqp.Table { return nil })
	return recording{
		Description: "seed-1 style: the consumer republishes to retry.exchange with an incremented x-retry-count; a TTL delay queue dead-letters back to main.exchange; after 3 retries it publishes to error.exchange. x-death names only the delay queue (reason expired, exchange retry.exchange): origin resolution must follow the delay queue's dead-letter arguments.",
		ParkingLot:  s.name(t, "payment.error.dlq"),
		Message:     broker.FromDelivery(d),
	}
}

func recordContract(t *testing.T, s *studio) recording {
	var firstFailed time.Time
	d := runRepublishLoop(t, s, func(d amqp.Delivery, park bool, retries int32) amqp.Table {
		now := time.Now().Truncate(time.Second)
		h := amqp.Table{}
		if _, ok := d.Headers[HeaderOriginalExchange]; !ok {
			// The first failure names where the message entered the main path.
			firstFailed = now
			h[HeaderOriginalExchange] = d.Exchange
			h[HeaderOriginalRoutingKey] = d.RoutingKey
			h[HeaderOriginalQueue] = s.name(t, "payment.main.queue")
			h[HeaderFirstFailedAt] = firstFailed
		}
		if park {
			h[HeaderRetryCount] = retries
			h[HeaderParkedAt] = now
			h[HeaderFailureKind] = KindRetriesExhausted
		}
		return h
	})
	return recording{
		Description: "retrycore's header contract, written by hand through the seed-1 topology: x-retry-count, x-last-error, x-original-exchange / -routing-key / -queue, x-first-failed-at, x-parked-at, x-failure-kind; it also carries the broker's x-death of the delay queue.",
		ParkingLot:  s.name(t, "payment.error.dlq"),
		Message:     broker.FromDelivery(d),
	}
}

// rejectedCount is how a retry-by-nack consumer counts attempts.
func rejectedCount(h amqp.Table, queue string) int64 {
	deaths, _ := Deaths(h)
	if d, ok := findDeath(deaths, queue, "rejected"); ok {
		return d.Count
	}
	return 0
}

func recordSeed2(t *testing.T, s *studio) recording {
	ex := s.exchange(t, "invoice.exchange", "direct")
	mainQN, delayQN, parkQN := s.name(t, "invoice.main.queue"), s.name(t, "invoice.retry.1s"), s.name(t, "invoice.parking-lot")
	mainQ := s.queue(t, "invoice.main.queue", amqp.Table{
		"x-dead-letter-exchange":    "",
		"x-dead-letter-routing-key": delayQN,
	})
	s.queue(t, "invoice.retry.1s", amqp.Table{
		"x-message-ttl":             int32(1000),
		"x-dead-letter-exchange":    "",
		"x-dead-letter-routing-key": mainQN,
	})
	parkQ := s.queue(t, "invoice.parking-lot", nil)
	s.bind(t, mainQ, ex, "invoice.created")
	work, parked := s.consume(t, mainQ), s.consume(t, parkQ)
	s.publish(t, ex, "invoice.created", amqp.Publishing{
		ContentType: "application/json", DeliveryMode: amqp.Persistent,
		Body: []byte(`{"invoice":"INV-2031","customer":"c-88"}`),
	})
	s.flow("producer publishes to invoice.exchange / invoice.created → invoice.main.queue (no message_id)")
	const maxRejects = 3
	d := drive(t, work, parked, func(d amqp.Delivery) {
		n := rejectedCount(d.Headers, mainQN)
		if n < maxRejects {
			if err := d.Nack(false, false); err != nil {
				t.Fatal(err)
			}
			s.flow("attempt %d fails: consumer nacks (requeue=false); dead-lettered via the default exchange to invoice.retry.1s, which expires it back via the default exchange to invoice.main.queue", n+1)
			return
		}
		s.publish(t, "", parkQN, withHeaders(d, amqp.Table{HeaderLastError: `customer "c-88" not found in billing`}))
		s.flow("attempt %d (x-death rejected count %d): consumer publishes to invoice.parking-lot via the default exchange with x-last-error, acks", n+1, n)
		ack(t, d)
	})
	return recording{
		Description: "seed-2 style retry by nack: the main queue dead-letters rejected messages via the default exchange to a TTL queue that dead-letters back via the default exchange; after 3 rejections the consumer parks it with x-last-error. Attempts come from the x-death rejected count; origin is the first death's exchange and routing key.",
		ParkingLot:  parkQN,
		Message:     broker.FromDelivery(d),
	}
}

const springStack = `org.springframework.amqp.rabbit.support.ListenerExecutionFailedException: Listener method 'public void com.example.orders.OrderListener.handle(com.example.orders.Order)' threw exception
	at org.springframework.amqp.rabbit.listener.AbstractMessageListenerContainer.wrapToListenerExecutionFailedExceptionIfNeeded(AbstractMessageListenerContainer.java:1841)
	at org.springframework.amqp.rabbit.listener.AbstractMessageListenerContainer.doInvokeListener(AbstractMessageListenerContainer.java:1731)
Caused by: java.lang.IllegalStateException: order 4711 has no shipping address
	at com.example.orders.OrderListener.handle(OrderListener.java:42)
	... 24 more
`

func recordSpring(t *testing.T, s *studio) recording {
	ex := s.exchange(t, "orders.exchange", "direct")
	dlx := s.exchange(t, "DLX", "direct")
	retryQN := s.name(t, "orders.queue.retry")
	q := s.queue(t, "orders.queue", amqp.Table{
		"x-dead-letter-exchange":    "",
		"x-dead-letter-routing-key": retryQN,
	})
	s.queue(t, "orders.queue.retry", amqp.Table{
		"x-message-ttl":             int32(500),
		"x-dead-letter-exchange":    ex,
		"x-dead-letter-routing-key": "orders.created",
	})
	dlq := s.queue(t, "orders.queue.dlq", nil)
	s.bind(t, q, ex, "orders.created")
	s.bind(t, dlq, dlx, "error.orders.created")
	work, parked := s.consume(t, q), s.consume(t, dlq)
	s.publish(t, ex, "orders.created", amqp.Publishing{
		ContentType: "application/json", ContentEncoding: "UTF-8", DeliveryMode: amqp.Persistent,
		MessageId: "6f1c1d3e-2b7a-4c55-9a0e-0c8d2b7e4f11",
		Headers:   amqp.Table{"__TypeId__": "com.example.orders.Order"},
		Body:      []byte(`{"orderId":4711,"items":[{"sku":"A-1","qty":2}]}`),
	})
	s.flow("producer (RabbitTemplate) publishes to orders.exchange / orders.created → orders.queue")
	d := drive(t, work, parked, func(d amqp.Delivery) {
		if _, died := d.Headers[HeaderDeath]; !died {
			if err := d.Nack(false, false); err != nil {
				t.Fatal(err)
			}
			s.flow("first delivery: the listener rejects it (requeue=false); orders.queue dead-letters it to orders.queue.retry, whose TTL sends it back to orders.exchange with its routing key")
			return
		}
		// RepublishMessageRecoverer: retries exhausted, publish to the
		// error exchange with "error." + the received routing key.
		s.publish(t, dlx, "error."+d.RoutingKey, withHeaders(d, amqp.Table{
			"x-exception-stacktrace": springStack,
			// Spring writes the cause's message when there is one.
			"x-exception-message":   "order 4711 has no shipping address",
			"x-original-exchange":   d.Exchange,
			"x-original-routingKey": d.RoutingKey,
		}))
		s.flow("second delivery: RepublishMessageRecoverer publishes to DLX / error.orders.created → orders.queue.dlq with x-exception-*, x-original-exchange, x-original-routingKey; acks")
		ack(t, d)
	})
	return recording{
		Description: "Spring AMQP RepublishMessageRecoverer after one rejection and one TTL retry: Spring's x-exception-message/-stacktrace and x-original-exchange/x-original-routingKey, plus the broker's x-death.",
		ParkingLot:  s.name(t, "orders.queue.dlq"),
		Message:     broker.FromDelivery(d),
	}
}

const dotnetStack = `   at Orders.Consumers.SubmitOrderConsumer.Consume(ConsumeContext` + "`" + `1 context) in /src/Orders/Consumers/SubmitOrderConsumer.cs:line 27
   at MassTransit.DependencyInjection.ScopeConsumerFactory` + "`" + `1.Send[TMessage](ConsumeContext` + "`" + `1 context, IPipe` + "`" + `1 next)
   at MassTransit.Middleware.ConsumerMessageFilter` + "`" + `2.MassTransit.IFilter<MassTransit.ConsumeContext<TMessage>>.Send(ConsumeContext` + "`" + `1 context, IPipe` + "`" + `1 next)`

func recordMassTransit(t *testing.T, s *studio) recording {
	inEx := s.exchange(t, "orders", "fanout")
	errEx := s.exchange(t, "orders_error", "fanout")
	inQ := s.queue(t, "orders", nil)
	errQ := s.queue(t, "orders_error", nil)
	s.bind(t, inQ, inEx, "")
	s.bind(t, errQ, errEx, "")
	work, parked := s.consume(t, inQ), s.consume(t, errQ)
	msgID := "0b6f0000-ac11-0242-5f7a-08dc1a2b3c4d"
	s.publish(t, inEx, "", amqp.Publishing{
		ContentType: "application/vnd.masstransit+json", DeliveryMode: amqp.Persistent, MessageId: msgID,
		Headers: amqp.Table{"Content-Type": "application/vnd.masstransit+json", "publishId": "1"},
		Body: []byte(`{"messageId":"` + msgID + `","sourceAddress":"rabbitmq://localhost/web_bus","destinationAddress":"rabbitmq://localhost/orders",` +
			`"messageType":["urn:message:Orders.Contracts:SubmitOrder"],"message":{"orderId":"4711","customer":null},"sentTime":"2024-05-01T12:00:00Z"}`),
	})
	s.flow("publisher sends SubmitOrder to the orders exchange (fanout) → orders queue")
	d := drive(t, work, parked, func(d amqp.Delivery) {
		now := time.Now().UTC()
		s.publish(t, errEx, "", withHeaders(d, amqp.Table{
			"MT-Fault-Message":           "Object reference not set to an instance of an object.",
			"MT-Fault-ExceptionType":     "System.NullReferenceException",
			"MT-Fault-StackTrace":        dotnetStack,
			"MT-Fault-Timestamp":         now.Format("2006-01-02T15:04:05.0000000Z"),
			"MT-Fault-ConsumerType":      "Orders.Consumers.SubmitOrderConsumer",
			"MT-Fault-MessageType":       "Orders.Contracts.SubmitOrder",
			"MT-Reason":                  "fault",
			"MT-Host-MachineName":        "orders-7d9f",
			"MT-Host-MassTransitVersion": "8.2.2.0",
			"MT-Fault-InputAddress":      "rabbitmq://localhost/" + s.name(t, "orders"),
		}))
		s.flow("the consumer throws; MassTransit moves the message to the orders_error exchange (fanout) → orders_error queue with MT-Fault-* and MT-Reason, acks")
		ack(t, d)
	})
	return recording{
		Description: "MassTransit fault: the orders_error queue holds the message with MT-Fault-Message, -ExceptionType, -StackTrace, -Timestamp, -InputAddress and MT-Reason; no x-death, no x-original-*.",
		ParkingLot:  errQ,
		Message:     broker.FromDelivery(d),
	}
}

// allTypesHeaders holds every AMQP field type amqp091-go writes, edge values
// included, and containers nested 10 deep. No NaN or ±Inf: RabbitMQ 3.10.8
// closes the connection (541 INTERNAL_ERROR) on a header holding one.
func allTypesHeaders() amqp.Table {
	nested := amqp.Table{"leaf": "bottom", "n": int32(10)}
	for i := 9; i >= 1; i-- {
		if i%2 == 0 {
			nested = amqp.Table{"level": int32(i), "down": nested}
		} else {
			nested = amqp.Table{"level": int32(i), "down": []any{nested, int8(int8(i))}}
		}
	}
	arr := []any{"bottom"}
	for i := 0; i < 9; i++ {
		arr = []any{arr, int16(i)}
	}
	return amqp.Table{
		"int8":                int8(-128),
		"uint8":               uint8(255),
		"int16":               int16(-32768),
		"uint16":              uint16(65535),
		"int32":               int32(-2147483648),
		"uint32":              uint32(4294967295),
		"int64-min":           int64(-9223372036854775808),
		"int64-max":           int64(9223372036854775807),
		"float32":             float32(3.1415927),
		"float64":             2.718281828459045,
		"float64-neg-zero":    math.Copysign(0, -1),
		"decimal":             amqp.Decimal{Scale: 2, Value: -12345},
		"bool-true":           true,
		"bool-false":          false,
		"string":              "héllo wörld ✓ \"quoted\" \u0000 nul",
		"string-empty":        "",
		"string-invalid-utf8": "bad \xff\xfe bytes \xc3\x28",
		"bytes":               []byte{0x00, 0xff, 0x80, 0x7f, 'A'},
		"bytes-empty":         []byte{},
		"timestamp":           time.Unix(1714564800, 0),
		"timestamp-1969":      time.Unix(-86400, 0),
		"void":                nil,
		"table-empty":         amqp.Table{},
		"array-empty":         []any{},
		"array-mixed":         []any{int8(1), "two", 3.0, true, nil, []byte("five"), time.Unix(6, 0), amqp.Decimal{Scale: 1, Value: 7}, amqp.Table{"eight": uint16(8)}},
		"nested-10":           nested,
		"array-10":            arr,
	}
}

func recordAllTypes(t *testing.T, s *studio) recording {
	q := s.queue(t, "all.types.queue", nil)
	parked := s.consume(t, q)
	body := make([]byte, 0, 300)
	for i := 255; i >= 0; i-- { // every byte value, starting with 0xff: not UTF-8
		body = append(body, byte(i))
	}
	body = append(body, "\xc3\x28 invalid sequence, then text"...)
	s.publish(t, "", q, amqp.Publishing{
		Headers:         allTypesHeaders(),
		ContentType:     "application/octet-stream",
		ContentEncoding: "identity",
		DeliveryMode:    amqp.Persistent,
		Priority:        7,
		CorrelationId:   "corr-42",
		ReplyTo:         "all.types.replies",
		Expiration:      "3600000",
		MessageId:       "all-types-1",
		Timestamp:       time.Unix(1714564800, 0),
		Type:            "example.binary",
		UserId:          "guest", // must match the connection's user
		AppId:           "parkinglot-recorder",
		Body:            body,
	})
	s.flow("published through the default exchange to all.types.queue with every property set, every header type and a binary body")
	d := drive(t, nil, parked, nil)
	return recording{
		Description: "every AMQP field type in headers (edge values, -0, invalid UTF-8, empty containers, tables and arrays nested 10 deep), every basic property, and a body that is not UTF-8.",
		ParkingLot:  q,
		Message:     broker.FromDelivery(d),
	}
}

// recordQuorumBrowsed parks a message in a quorum queue and gives it back
// twice, as a browse does, so the delivery carries the broker's
// x-delivery-count and the redelivered flag.
func recordQuorumBrowsed(t *testing.T, s *studio) recording {
	q := s.queue(t, "payment.error.quorum", amqp.Table{"x-queue-type": "quorum"})
	s.publish(t, "", q, amqp.Publishing{
		ContentType: "application/json", DeliveryMode: amqp.Persistent, MessageId: "pay-0042",
		Headers: amqp.Table{HeaderLastError: "card declined: insufficient funds", HeaderRetryCount: int32(0), HeaderFailureKind: KindPermanent},
		Body:    []byte(`{"payment_id":"pay-0042","amount":"9.99"}`),
	})
	s.flow("a parked message is published to the quorum queue payment.error.quorum through the default exchange")
	var d amqp.Delivery
	for i := 0; i < 3; i++ {
		var ok bool
		var err error
		if d, ok, err = s.ch.Get(q, false); err != nil || !ok {
			t.Fatalf("get %d: ok=%v err=%v", i, ok, err)
		}
		if i < 2 {
			if err := d.Nack(false, true); err != nil {
				t.Fatal(err)
			}
			s.flow("browse %d: basic.get, then basic.nack(requeue=true) gives it back", i+1)
		}
	}
	ack(t, d)
	s.flow("third get: recorded (x-delivery-count and redelivered set by the broker)")
	return recording{
		Description: "a permanent failure parked in a quorum queue and browsed twice: the broker adds x-delivery-count (int64) and sets redelivered.",
		ParkingLot:  q,
		Message:     broker.FromDelivery(d),
	}
}

// write renames the unique names back to seed names and writes the file.
func (s *studio) write(t *testing.T, r recording) {
	t.Helper()
	r.Broker = "RabbitMQ " + s.conn.ServerVersion.String()
	r.Topology.Exchanges = s.topo.Exchanges
	r.Topology.Queues = map[string]json.RawMessage{}
	for seed, args := range s.queueTb {
		enc, err := broker.EncodeTable(s.renameTable(args))
		if err != nil {
			t.Fatal(err)
		}
		r.Topology.Queues[seed] = enc
	}
	for _, b := range s.topo.Bindings {
		r.Topology.Bindings = append(r.Topology.Bindings, recordedBinding{
			Exchange: s.rename(b.Exchange), RoutingKey: s.rename(b.RoutingKey), Queue: s.rename(b.Queue),
		})
	}
	r.Topology.Flow = s.topo.Flow
	r.ParkingLot = s.rename(r.ParkingLot)
	m := r.Message
	m.Headers = s.renameTable(m.Headers)
	m.Exchange, m.RoutingKey = s.rename(m.Exchange), s.rename(m.RoutingKey)
	m.DeliveryTag = 0
	r.Message = m
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(recordedDir, r.Scenario+".json")
	if err := os.WriteFile(path, append(data, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s", path)
}

// rename replaces every unique name inside s by its seed name (longest
// first, so no name is replaced inside another).
func (s *studio) rename(v string) string {
	uniques := make([]string, 0, len(s.unique))
	for u := range s.unique {
		uniques = append(uniques, u)
	}
	sort.Slice(uniques, func(i, j int) bool { return len(uniques[i]) > len(uniques[j]) })
	for _, u := range uniques {
		v = strings.ReplaceAll(v, u, s.unique[u])
	}
	return v
}

func (s *studio) renameTable(t amqp.Table) amqp.Table {
	if t == nil {
		return nil
	}
	out := make(amqp.Table, len(t))
	for k, v := range t {
		out[k] = s.renameValue(v)
	}
	return out
}

func (s *studio) renameValue(v any) any {
	switch x := v.(type) {
	case string:
		return s.rename(x)
	case amqp.Table:
		return s.renameTable(x)
	case []any:
		if x == nil {
			return x
		}
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = s.renameValue(e)
		}
		return out
	}
	return v
}
