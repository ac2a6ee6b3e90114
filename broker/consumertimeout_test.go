package broker

import (
	"testing"
	"time"
)

// The queue's argument wins over its policy; neither set is 0 (the
// broker's own consumer_timeout applies).
func TestQueueConsumerTimeoutReadsTheArgumentThenThePolicy(t *testing.T) {
	cases := []struct {
		name string
		q    QueueInfo
		want time.Duration
	}{
		{"none", QueueInfo{}, 0},
		{"argument", QueueInfo{Arguments: map[string]any{"x-consumer-timeout": float64(8000)}}, 8 * time.Second},
		{"policy", QueueInfo{EffectivePolicy: map[string]any{"consumer-timeout": float64(60000)}}, time.Minute},
		{"argument over policy", QueueInfo{
			Arguments:       map[string]any{"x-consumer-timeout": float64(8000)},
			EffectivePolicy: map[string]any{"consumer-timeout": float64(60000)},
		}, 8 * time.Second},
		{"not a number", QueueInfo{Arguments: map[string]any{"x-consumer-timeout": "soon"}}, 0},
	}
	for _, c := range cases {
		if got := QueueConsumerTimeout(c.q); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
