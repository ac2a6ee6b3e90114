//go:build integration

package retrycore

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/broker/brokertest"
)

// testPipeline is a pipeline with names unique to the test, all of which
// are deleted when the test ends.
func testPipeline(t *testing.T, queueType string, delays ...time.Duration) Pipeline {
	t.Helper()
	name := brokertest.Name(t, "")
	p := Pipeline{
		Name:           name,
		QueueType:      queueType,
		Main:           MainPath{Exchange: name + ".main", Queue: name + ".main.queue", RoutingKey: "work"},
		Retry:          RetryPath{Exchange: name + ".retry", RoutingKey: "retry"},
		Error:          ErrorPath{Exchange: name + ".error", Queue: name + ".dlq", RoutingKey: "error"},
		MaxRetries:     3,
		Prefetch:       10,
		Concurrency:    2,
		HandlerTimeout: NewDelay(10 * time.Second),
	}
	for _, d := range delays {
		p.Retry.Delays = append(p.Retry.Delays, NewDelay(d))
	}
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, q := range append([]string{p.Main.Queue, p.Error.Queue}, tierQueues(p)...) {
		brokertest.DeleteQueueAtEnd(t, q)
	}
	for _, ex := range []string{p.Main.Exchange, p.Retry.Exchange, p.Error.Exchange} {
		brokertest.DeleteExchangeAtEnd(t, ex)
	}
	return p
}

func tierQueues(p Pipeline) []string {
	var qs []string
	for _, tier := range p.Tiers() {
		qs = append(qs, tier.Queue)
	}
	return qs
}

func declareWith(t *testing.T, p Pipeline, m *broker.Management) (Report, error) {
	t.Helper()
	conn := brokertest.Dial(t, "")
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	defer ch.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return Declare(ctx, ch, p, DeclareOptions{Server: conn.ServerVersion, Management: m})
}

func mustDeclare(t *testing.T, p Pipeline) Report {
	t.Helper()
	rep, err := declareWith(t, p, brokertest.Management(t))
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func statuses(rep Report) map[string]int {
	out := map[string]int{}
	for _, e := range rep.Entries {
		out[e.Status]++
	}
	return out
}

func TestDeclareTwiceIsIdempotent(t *testing.T) {
	p := testPipeline(t, QueueClassic, 200*time.Millisecond, time.Second)
	m := brokertest.Management(t)
	first, err := declareWith(t, p, m)
	if err != nil {
		t.Fatal(err)
	}
	// 3 exchanges, main + 2 delay + parking lot queues, 4 bindings.
	if got := statuses(first); got[StatusCreated] != 11 || len(first.Entries) != 11 {
		t.Fatalf("first declare: %v\n%+v", got, first.Entries)
	}
	second, err := declareWith(t, p, m)
	if err != nil {
		t.Fatalf("second declare: %v", err)
	}
	if got := statuses(second); got[StatusExisting] != 11 {
		t.Fatalf("second declare: %v\n%+v", got, second.Entries)
	}
	third, err := declareWith(t, p, nil)
	if err != nil {
		t.Fatalf("declare without the management API: %v", err)
	}
	if got := statuses(third); got[StatusDeclared] != 11 {
		t.Fatalf("without the management API every entry is just declared: %v", got)
	}
}

func TestDeclareFallsBackWhenTheManagementAPIDoesNotAnswer(t *testing.T) {
	p := testPipeline(t, QueueClassic, time.Second)
	dead, err := broker.NewManagement("http://guest:guest@127.0.0.1:1", "/")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := declareWith(t, p, dead)
	if err != nil {
		t.Fatalf("a silent management API must not stop the declare: %v", err)
	}
	if got := statuses(rep); got[StatusDeclared] != len(rep.Entries) || len(rep.Warnings) != 1 || !strings.Contains(rep.Warnings[0], "management API unavailable") {
		t.Fatalf("statuses %v, warnings %q", got, rep.Warnings)
	}
}

func TestDeclareBuildsTheThreeTiers(t *testing.T) {
	p := testPipeline(t, QueueClassic, 200*time.Millisecond, 5*time.Second)
	mustDeclare(t, p)
	m := brokertest.Management(t)
	ctx := context.Background()

	mq, err := m.Queue(ctx, p.Main.Queue)
	if err != nil {
		t.Fatal(err)
	}
	if !mq.Durable || mq.Type != QueueClassic || mq.Arguments["x-dead-letter-exchange"] != p.Error.Exchange || mq.Arguments["x-dead-letter-routing-key"] != p.Error.RoutingKey {
		t.Fatalf("main queue: %+v", mq)
	}
	for i, tier := range p.Tiers() {
		q, err := m.Queue(ctx, tier.Queue)
		if err != nil {
			t.Fatal(err)
		}
		wantTTL := []int64{200, 5000}[i]
		if q.Arguments["x-message-ttl"] != wantTTL || q.Arguments["x-dead-letter-exchange"] != p.Main.Exchange || q.Arguments["x-dead-letter-routing-key"] != p.Main.RoutingKey {
			t.Fatalf("delay queue %s: %v", tier.Queue, q.Arguments)
		}
	}
	for _, want := range []struct{ ex, queue, key string }{
		{p.Main.Exchange, p.Main.Queue, "work"},
		{p.Retry.Exchange, p.Name + ".retry.200ms", "retry.200ms"},
		{p.Retry.Exchange, p.Name + ".retry.5s", "retry.5s"},
		{p.Error.Exchange, p.Error.Queue, "error"},
	} {
		bs, err := m.Bindings(ctx, want.ex)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, b := range bs {
			found = found || (b.Destination == want.queue && b.RoutingKey == want.key)
		}
		if !found || len(bs) != map[bool]int{true: 2, false: 1}[want.ex == p.Retry.Exchange] {
			t.Fatalf("bindings of %s: %+v, want %s by %s", want.ex, bs, want.queue, want.key)
		}
	}
	for _, ex := range []string{p.Main.Exchange, p.Retry.Exchange, p.Error.Exchange} {
		info, err := m.Exchange(ctx, ex)
		if err != nil || info.Type != "direct" {
			t.Fatalf("exchange %s: %+v %v", ex, info, err)
		}
	}
}

func TestDeclareReportsADifferingArgumentByName(t *testing.T) {
	p := testPipeline(t, QueueQuorum, 200*time.Millisecond)
	// The main queue exists as a classic queue, otherwise as the pipeline wants.
	ch := brokertest.Channel(t)
	if _, err := ch.QueueDeclare(p.Main.Queue, true, false, false, false, amqp.Table{
		"x-dead-letter-exchange": p.Error.Exchange, "x-dead-letter-routing-key": p.Error.RoutingKey,
	}); err != nil {
		t.Fatal(err)
	}
	want := `queue "` + p.Main.Queue + `" exists with x-queue-type=classic but the pipeline wants quorum (delete the queue or change the pipeline)`
	for _, withManagement := range []bool{true, false} {
		var m *broker.Management
		if withManagement {
			m = brokertest.Management(t)
		}
		_, err := declareWith(t, p, m)
		var te *TopologyError
		if !errors.As(err, &te) || !errors.Is(err, broker.ErrPreconditionFailed) {
			t.Fatalf("management=%v: err = %v, want a TopologyError", withManagement, err)
		}
		if err.Error() != want {
			t.Fatalf("management=%v:\n got %s\nwant %s", withManagement, err, want)
		}
	}
}

func TestDeclareReportsEveryDifferingArgumentWithManagement(t *testing.T) {
	p := testPipeline(t, QueueClassic, 200*time.Millisecond)
	ch := brokertest.Channel(t)
	tier := p.Tiers()[0].Queue
	if _, err := ch.QueueDeclare(tier, true, false, false, false, amqp.Table{"x-message-ttl": int32(5000), "x-max-length": int32(10)}); err != nil {
		t.Fatal(err)
	}
	_, err := declareWith(t, p, brokertest.Management(t))
	var te *TopologyError
	if !errors.As(err, &te) || te.Name != tier {
		t.Fatalf("err = %v, want a TopologyError for %s", err, tier)
	}
	for _, part := range []string{
		"with x-message-ttl=5000 but the pipeline wants 200",
		"without x-dead-letter-exchange but the pipeline wants " + p.Main.Exchange,
		"without x-dead-letter-routing-key but the pipeline wants work",
		"with x-max-length=10 but the pipeline does not set it",
	} {
		if !strings.Contains(err.Error(), part) {
			t.Errorf("error lacks %q:\n%s", part, err)
		}
	}
	if len(te.Diffs) != 4 {
		t.Errorf("diffs = %+v, want exactly 4", te.Diffs)
	}
	// Nothing was declared: the check came first.
	if _, err := brokertest.Management(t).Queue(context.Background(), p.Main.Queue); !errors.Is(err, broker.ErrNotFound) {
		t.Errorf("main queue was declared despite the conflict: %v", err)
	}
}

func TestDeclareReportsADifferingExchangeType(t *testing.T) {
	p := testPipeline(t, QueueClassic, time.Second)
	ch := brokertest.Channel(t)
	if err := ch.ExchangeDeclare(p.Retry.Exchange, "topic", true, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	want := `exchange "` + p.Retry.Exchange + `" exists with type=topic but the pipeline wants direct (delete the exchange or change the pipeline)`
	for _, m := range []*broker.Management{brokertest.Management(t), nil} {
		if _, err := declareWith(t, p, m); err == nil || err.Error() != want {
			t.Fatalf("management=%v:\n got %v\nwant %s", m != nil, err, want)
		}
	}
}

func TestDeclareQuorumParkingLotHasNoExhaustibleDeliveryLimit(t *testing.T) {
	p := testPipeline(t, QueueQuorum, 200*time.Millisecond)
	conn := brokertest.Dial(t, "")
	rep := mustDeclare(t, p)
	if rep.Server != conn.ServerVersion.String() {
		t.Fatalf("report server %q", rep.Server)
	}
	m := brokertest.Management(t)
	ctx := context.Background()
	for _, q := range append([]string{p.Main.Queue, p.Error.Queue}, tierQueues(p)...) {
		info, err := m.Queue(ctx, q)
		if err != nil || info.Type != QueueQuorum {
			t.Fatalf("queue %s: type %q, err %v; want quorum", q, info.Type, err)
		}
	}
	delay, _ := m.Queue(ctx, p.Tiers()[0].Queue)
	if delay.Arguments["x-dead-letter-strategy"] != "at-least-once" || delay.Arguments["x-overflow"] != "reject-publish" {
		t.Fatalf("delay queue lacks at-least-once dead-lettering: %v", delay.Arguments)
	}
	park, err := m.Queue(ctx, p.Error.Queue)
	if err != nil {
		t.Fatal(err)
	}
	if lim := broker.EffectiveDeliveryLimit(park, conn.ServerVersion); !lim.Unlimited() {
		t.Fatalf("parking lot delivery limit %d (%s), want unlimited", lim.Limit, lim.Source)
	}
	if !conn.ServerVersion.AtLeast(4, 0, 0) {
		if _, has := park.Arguments["x-delivery-limit"]; has {
			t.Fatalf("on %s x-delivery-limit must be left out (-1 is taken literally): %v", conn.ServerVersion, park.Arguments)
		}
	}
	// Browsing gives messages back again and again; 25 give-backs (past
	// 4.x's default of 20) must not lose the parked message.
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	brokertest.Publish(t, ch, p.Error.Exchange, p.Error.RoutingKey, amqp.Publishing{MessageId: "parked", Body: []byte("x")})
	for i := 0; i < 25; i++ {
		d, ok, err := ch.Get(p.Error.Queue, false)
		if err != nil || !ok {
			t.Fatalf("give-back %d: the parked message is gone (ok=%v, err=%v)", i, ok, err)
		}
		if err := d.Nack(false, true); err != nil {
			t.Fatal(err)
		}
	}
	if d, ok, err := ch.Get(p.Error.Queue, true); err != nil || !ok || d.MessageId != "parked" {
		t.Fatalf("after 25 give-backs: ok=%v err=%v", ok, err)
	}
}

func TestQueueSpecsParkingLotDeliveryLimitByVersion(t *testing.T) {
	p := Pipeline{Name: "payment", QueueType: QueueQuorum,
		Main:  MainPath{Exchange: "main.exchange", Queue: "payment.main.queue", RoutingKey: "payment.execute"},
		Retry: RetryPath{Exchange: "retry.exchange", RoutingKey: "payment.retry", Delays: []Delay{NewDelay(15 * time.Second)}},
		Error: ErrorPath{Exchange: "error.exchange", Queue: "payment.error.dlq", RoutingKey: "payment.error"}}
	for _, c := range []struct {
		server   broker.Version
		limit    any
		warnings int
	}{
		{broker.Version{Major: 3, Minor: 10, Patch: 8}, nil, 0},
		{broker.Version{Major: 3, Minor: 13, Patch: 7}, nil, 0},
		{broker.Version{Major: 4, Minor: 0, Patch: 0}, int64(-1), 0},
		{broker.Version{Major: 4, Minor: 2, Patch: 1}, int64(-1), 0},
		{broker.Version{}, nil, 1},
	} {
		specs, warnings := queueSpecs(p, c.server)
		park := specs[len(specs)-1]
		if park.name != "payment.error.dlq" || park.args["x-delivery-limit"] != c.limit || len(warnings) != c.warnings {
			t.Errorf("%s: parking lot args %v, warnings %v; want limit %v", c.server, park.args, warnings, c.limit)
		}
	}
	specs, _ := queueSpecs(p, broker.Version{Major: 4})
	if specs[1].name != "payment.retry.15s" || specs[1].key != "payment.retry.15s" || specs[1].args["x-message-ttl"] != int64(15000) {
		t.Errorf("delay tier: %+v", specs[1])
	}
}

func TestParseInequivalent(t *testing.T) {
	cases := map[string]ArgDiff{
		"PRECONDITION_FAILED - inequivalent arg 'x-queue-type' for queue 'q' in vhost '/': received the value 'quorum' of type 'longstr' but current is none":        {Arg: "x-queue-type", Want: "quorum"},
		"inequivalent arg 'x-max-length' for queue 'q' in vhost '/': received none but current is the value '5' of type 'long'":                                      {Arg: "x-max-length", Have: "5"},
		"inequivalent arg 'x-message-ttl' for queue 'a.b' in vhost 'v': received the value '200' of type 'long' but current is the value '5000' of type 'signedint'": {Arg: "x-message-ttl", Have: "5000", Want: "200"},
		"inequivalent arg 'type' for exchange 'x' in vhost '/': received 'direct' but current is 'topic'":                                                            {Arg: "type", Have: "topic", Want: "direct"},
		"inequivalent arg 'durable' for queue 'x' in vhost '/': received 'true' but current is 'false'":                                                              {Arg: "durable", Have: "false", Want: "true"},
	}
	for reason, want := range cases {
		got, ok := parseInequivalent(strings.TrimPrefix(reason, "PRECONDITION_FAILED - "))
		if !ok || got != want {
			t.Errorf("%s\n got %+v, want %+v", reason, got, want)
		}
	}
	if _, ok := parseInequivalent("something else"); ok {
		t.Error("an unrelated reason parsed")
	}
}
