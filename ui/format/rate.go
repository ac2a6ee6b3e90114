package format

import (
	"fmt"
	"strconv"
	"time"
)

// RateLine tells a run's rate in force, where it comes from and about how
// long n messages take at it: "rate: at most 7 message(s)/s (from the
// config, parking_lots.dlq.rate): about 2m23s for 1000 message(s)". ""
// when no rate limits the run.
func RateLine(rate float64, from string, n int) string {
	if rate <= 0 {
		return ""
	}
	line := "rate: at most " + strconv.FormatFloat(rate, 'f', -1, 64) + " message(s)/s"
	if from != "" {
		line += " (" + from + ")"
	}
	if n > 0 {
		d := time.Duration(float64(n) / rate * float64(time.Second))
		est := "about " + Age(d)
		if d < time.Second {
			est = "under a second"
		}
		line += fmt.Sprintf(": %s for %d message(s)", est, n)
	}
	return line
}
