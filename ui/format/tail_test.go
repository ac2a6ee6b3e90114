package format

import (
	"errors"
	"testing"
	"time"

	"github.com/parkinglot/parkinglot/replay"
)

func TestTailGap(t *testing.T) {
	at := time.Date(2026, 12, 7, 23, 4, 5, 0, time.FixedZone("CET", 3600))
	g := replay.TailGap{Lost: at, Retapped: at.Add(4 * time.Second), Err: errors.New("Exception (320) Reason: \"CONNECTION_FORCED\"\nshutdown")}
	want := `connection lost at 22:04:05 (Exception (320) Reason: "CONNECTION_FORCED" shutdown); tapped again at 22:04:09: arrivals in between were not seen`
	if got := TailGap(g); got != want {
		t.Errorf("TailGap:\n got %s\nwant %s", got, want)
	}
}
