package cli

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/replay"
	"github.com/parkinglot/parkinglot/replay/watch"
)

// TestQueuesDashboardColumns: the parking lots come first, the one whose
// oldest message waited longest first; each shows OLDEST, NEW 1H ("-"
// where the broker does not count arrivals) and TOP ERROR, and -o json
// carries arrivals_last_hour only where it is known.
func TestQueuesDashboardColumns(t *testing.T) {
	now := time.Date(2026, 12, 5, 3, 0, 0, 0, time.UTC)
	row := func(name string, messages int64, lot bool) replay.QueueRow {
		return replay.QueueRow{QueueInfo: broker.QueueInfo{Name: name, Type: "classic", Messages: messages, MessagesReady: messages}, ParkingLot: lot, Why: "name"}
	}
	v := QueuesView{
		Now: now,
		Rows: []replay.QueueRow{
			row("orders", 0, false), row("young.dlq", 40, true), row("old.dlq", 2, true), row("empty.dlq", 0, true),
		},
		Lots: map[string]watch.Snapshot{
			"young.dlq": {Queue: "young.dlq", Found: true, Depth: 40, OldestParkedAt: now.Add(-5 * time.Minute), Source: watch.AgeHeader,
				TopGroups: []watch.GroupCount{{Group: "ledger down <n>", Count: 30}, {Group: watch.GroupOther, Count: 10}}},
			"old.dlq":   {Queue: "old.dlq", Found: true, Depth: 2, OldestParkedAt: now.Add(-26 * time.Hour), Source: watch.AgeHeader},
			"empty.dlq": {Queue: "empty.dlq", Found: true},
		},
		LastHour: map[string]int64{"young.dlq": 37, "empty.dlq": 0},
	}
	v.sortByUrgency()
	var names []string
	for _, r := range v.Rows {
		names = append(names, r.Name)
	}
	if got := strings.Join(names, " "); got != "old.dlq young.dlq empty.dlq orders" {
		t.Errorf("order %s, want the oldest message first, then the deepest, empty last, other queues after", got)
	}
	var b bytes.Buffer
	if err := WriteQueues(&b, v); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"   NAME       TYPE     MESSAGES  READY  UNACKED  CONSUMERS  OLDEST  NEW 1H  WHY   TOP ERROR",
		"*  old.dlq    classic  2         2      0        0          1d2h    -       name  -",
		"*  young.dlq  classic  40        40     0        0          5m0s    37      name  30 × ledger down <n>",
		"*  empty.dlq  classic  0         0      0        0          -       0       name  -",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("queues lacks %q:\n%s", want, out)
		}
	}
	b.Reset()
	if err := WriteQueuesJSON(&b, v); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	for i, want := range []string{`"arrivals_last_hour"`, `"arrivals_last_hour":37`, `"arrivals_last_hour":0`, `"arrivals_last_hour"`} {
		has := strings.Contains(lines[i], want)
		if i == 0 || i == 3 {
			has = !has // old.dlq: not known; orders: not a parking lot
		}
		if !has {
			t.Errorf("line %d, arrivals_last_hour: %s", i+1, lines[i])
		}
		var tree any
		if err := json.Unmarshal([]byte(lines[i]), &tree); err != nil {
			t.Fatal(err)
		}
		checkKeys(t, "queues", tree)
	}
}
