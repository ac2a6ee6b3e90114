package format

import (
	"time"

	"github.com/parkinglot/parkinglot/replay"
)

// Clock is a time of day as a tail prints it: UTC, to the second.
func Clock(t time.Time) string { return t.UTC().Format("15:04:05") }

// TailGap says what a tail missed while it had no connection.
func TailGap(g replay.TailGap) string {
	line := "connection lost at " + Clock(g.Lost)
	if g.Err != nil {
		line += " (" + OneLine(g.Err.Error()) + ")"
	}
	return line + "; tapped again at " + Clock(g.Retapped) + ": arrivals in between were not seen"
}
