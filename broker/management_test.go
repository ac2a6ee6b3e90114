package broker_test

import (
	"encoding/json"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker"
)

func TestEffectiveDeliveryLimit(t *testing.T) {
	v310, v40 := broker.ParseVersion("3.10.8"), broker.ParseVersion("4.0.5")
	quorum := func(args amqp.Table, policy map[string]any) broker.QueueInfo {
		return broker.QueueInfo{Type: "quorum", Arguments: args, EffectivePolicy: policy, Policy: "p"}
	}
	cases := []struct {
		name      string
		q         broker.QueueInfo
		server    broker.Version
		unlimited bool
		limit     int64
	}{
		{"classic has none", broker.QueueInfo{Type: "classic"}, v40, true, 0},
		{"3.x unset is none", quorum(nil, nil), v310, true, 0},
		{"4.x unset is 20", quorum(nil, nil), v40, false, 20},
		{"unknown version assumes 20", quorum(nil, nil), broker.Version{}, false, 20},
		{"argument", quorum(amqp.Table{"x-delivery-limit": int64(3)}, nil), v310, false, 3},
		{"policy lower than argument", quorum(amqp.Table{"x-delivery-limit": int64(10)}, map[string]any{"delivery-limit": float64(4)}), v40, false, 4},
		{"argument lower than policy", quorum(amqp.Table{"x-delivery-limit": int64(2)}, map[string]any{"delivery-limit": float64(4)}), v40, false, 2},
		{"4.x -1 disables", quorum(amqp.Table{"x-delivery-limit": int64(-1)}, nil), v40, true, 0},
		// Measured on 3.10.8: -1 is taken literally and drops on the first give-back.
		{"3.x -1 is literal", quorum(amqp.Table{"x-delivery-limit": int64(-1)}, nil), v310, false, 0},
		{"3.x 0 is literal", quorum(amqp.Table{"x-delivery-limit": int64(0)}, nil), v310, false, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := broker.EffectiveDeliveryLimit(c.q, c.server)
			if got.Unlimited() != c.unlimited || (!c.unlimited && got.Limit != c.limit) {
				t.Fatalf("got %+v, want unlimited=%v limit=%d", got, c.unlimited, c.limit)
			}
		})
	}
}

// TestQueueInfoReadsEveryPolicyShape: the management API writes a queue
// without a policy as {}, [] or "" depending on the version; a queue info
// must decode whatever it is.
func TestQueueInfoReadsEveryPolicyShape(t *testing.T) {
	for _, tc := range []struct {
		json  string
		limit any
	}{
		{`{}`, nil}, {`[]`, nil}, {`""`, nil}, {`null`, nil},
		{`{"delivery-limit": 5}`, float64(5)},
	} {
		var q broker.QueueInfo
		if err := json.Unmarshal([]byte(`{"name":"q","type":"quorum","effective_policy_definition":`+tc.json+`}`), &q); err != nil {
			t.Errorf("%s: %v", tc.json, err)
			continue
		}
		if got := q.EffectivePolicy["delivery-limit"]; got != tc.limit {
			t.Errorf("%s: delivery-limit %v, want %v", tc.json, got, tc.limit)
		}
	}
	var q broker.QueueInfo
	if err := json.Unmarshal([]byte(`{"effective_policy_definition":42}`), &q); err == nil {
		t.Error("a number decoded as a policy definition")
	}
}
