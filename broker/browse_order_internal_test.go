package broker

import "testing"

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
// consumers come back in no fixed order), and into at most size tags.
func TestBatchesStopAtSegments(t *testing.T) {
	seq := func(from, to uint64) []uint64 {
		var s []uint64
		for t := from; t <= to; t++ {
			s = append(s, t)
		}
		return s
	}
	tags := append(seq(1, 40), seq(45, 100)...) // 41–44 acked
	got := batches(tags, []uint64{30, 50, 51}, giveBackBatch)
	want := [][2]uint64{{1, 29}, {30, 49}, {50, 50}, {51, 82}, {83, 100}}
	if len(got) != len(want) {
		t.Fatalf("%d batches %v, want %v", len(got), got, want)
	}
	for i, b := range got {
		if b[0] != want[i][0] || b[len(b)-1] != want[i][1] || len(b) > giveBackBatch {
			t.Errorf("batch %d is %d…%d (%d tags), want %d…%d", i, b[0], b[len(b)-1], len(b), want[i][0], want[i][1])
		}
	}
	if got := batches(seq(1, 64), nil, giveBackBatch); len(got) != 2 || len(got[0]) != 32 {
		t.Errorf("64 tags, no segments: %v", got)
	}
	if got := batches(tags, []uint64{30, 50, 51}, 0); len(got) != 4 || len(got[3]) != 50 {
		t.Errorf("segments only: %v", got)
	}
}
