package replay

import (
	"testing"
	"time"

	"golang.org/x/time/rate"

	"github.com/parkinglot/parkinglot/broker"
)

// A rate-limited pass chooses for a quarter of the consumer timeout and
// reads ahead no more than the rate sends in another quarter, so nothing
// is held past half of it; a run without a rate is not bounded.
func TestBoundPassKeepsAHeldMessageUnderHalfTheConsumerTimeout(t *testing.T) {
	cases := []struct {
		name      string
		rate      float64 // 0: no limiter
		timeout   time.Duration
		chooseFor time.Duration
		ahead     int
	}{
		{"no rate", 0, 8 * time.Second, 0, readAhead},
		{"queue timeout 8s at 2/s", 2, 8 * time.Second, 2 * time.Second, 4},
		{"broker default at 1/s", 1, 0, broker.DefaultConsumerTimeout / 4, readAhead},
		{"slower than one a quarter", 0.01, 8 * time.Second, 2 * time.Second, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := &run{readAhead: readAhead}
			if c.rate > 0 {
				r.limiter = rate.NewLimiter(rate.Limit(c.rate), 1)
			}
			r.boundPass(broker.QueueFacts{ConsumerTimeout: c.timeout})
			if r.chooseFor != c.chooseFor || r.readAhead != c.ahead {
				t.Fatalf("choose for %v, read ahead %d; want %v, %d", r.chooseFor, r.readAhead, c.chooseFor, c.ahead)
			}
			start := time.Now().Add(-c.chooseFor - time.Millisecond)
			if got := r.timeUp(start); got != (c.chooseFor > 0) {
				t.Fatalf("time up after %v: %v", c.chooseFor, got)
			}
		})
	}
}
