package format

import "testing"

func TestRateLine(t *testing.T) {
	for _, tc := range []struct {
		rate float64
		from string
		n    int
		want string
	}{
		{0, "--rate", 100, ""},
		{7, "from the config, parking_lots.dlq.rate", 1000, "rate: at most 7 message(s)/s (from the config, parking_lots.dlq.rate): about 2m23s for 1000 message(s)"},
		{200, "--rate", 2000, "rate: at most 200 message(s)/s (--rate): about 10s for 2000 message(s)"},
		{0.5, "--rate", 3, "rate: at most 0.5 message(s)/s (--rate): about 6s for 3 message(s)"},
		{1000, "", 10, "rate: at most 1000 message(s)/s: under a second for 10 message(s)"},
		{10, "--rate", 0, "rate: at most 10 message(s)/s (--rate)"},
	} {
		if got := RateLine(tc.rate, tc.from, tc.n); got != tc.want {
			t.Errorf("RateLine(%v, %q, %d) = %q, want %q", tc.rate, tc.from, tc.n, got, tc.want)
		}
	}
}
