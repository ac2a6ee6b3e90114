package broker

import (
	"slices"
	"testing"
)

// orderRuleFor follows what was measured on 3.10.8, 4.0.5 and 4.3.6
// (browse_order.go): an early end on a quorum queue (or one of unknown
// type) holds the rest; the give-back is batched before 4.0 where a
// delivery limit may be set.
func TestOrderRuleFor(t *testing.T) {
	v310, v40, v42, v43 := Version{3, 10, 8}, Version{4, 0, 5}, Version{4, 2, 0}, Version{4, 3, 6}
	unlimited := QueueFacts{Type: "quorum", LimitKnown: true, DeliveryLimit: DeliveryLimit{None: true}}
	limited := QueueFacts{Type: "quorum", LimitKnown: true, DeliveryLimit: DeliveryLimit{Limit: 20}}
	classic := QueueFacts{Type: "classic", LimitKnown: true, DeliveryLimit: DeliveryLimit{None: true}}
	unknown := QueueFacts{}
	for _, c := range []struct {
		name string
		f    QueueFacts
		v    Version
		want orderRule
	}{
		{"classic 3.10", classic, v310, orderRule{}},
		{"classic 4.3", classic, v43, orderRule{}},
		{"quorum unlimited 3.10", unlimited, v310, orderRule{holdAll: true}},
		{"quorum unlimited 4.0", unlimited, v40, orderRule{holdAll: true}},
		{"quorum unlimited 4.2", unlimited, v42, orderRule{holdAll: true}},
		{"quorum unlimited 4.3", unlimited, v43, orderRule{holdAll: true}},
		{"quorum limited 3.10", limited, v310, orderRule{holdAll: true, batched: true}},
		{"quorum limited 4.0", limited, v40, orderRule{holdAll: true}},
		{"quorum limited 4.3", limited, v43, orderRule{holdAll: true}},
		{"unknown 3.10", unknown, v310, orderRule{holdAll: true, batched: true}},
		{"unknown 4.0", unknown, v40, orderRule{holdAll: true}},
		{"unknown 4.3", unknown, v43, orderRule{holdAll: true}},
		{"unknown version", unknown, Version{}, orderRule{holdAll: true, batched: true}},
	} {
		if got := orderRuleFor(c.f, c.v); got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}

// batches cuts a give-back at the start of each segment (returns across
// consumers come back in no fixed order), and into at most size tags; an
// acked tag is in no batch.
func TestBatchesStopAtSegments(t *testing.T) {
	acked := map[uint64]bool{41: true, 42: true, 43: true, 44: true}
	held := func(t uint64) bool { return !acked[t] }
	for _, c := range []struct {
		name   string
		starts []uint64
		size   int
		want   []batch
	}{
		{"segments and size", []uint64{30, 50, 51}, giveBackBatch, []batch{{29, 29}, {49, 16}, {50, 1}, {82, 32}, {100, 18}}},
		{"size only", nil, giveBackBatch, []batch{{32, 32}, {68, 32}, {100, 32}}},
		{"segments only", []uint64{30, 50, 51}, 0, []batch{{29, 29}, {49, 16}, {50, 1}, {100, 50}}},
		{"a segment all acked", []uint64{41, 45}, 0, []batch{{40, 40}, {100, 56}}},
	} {
		if got := batches(1, 100, held, c.starts, c.size); !slices.Equal(got, c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
