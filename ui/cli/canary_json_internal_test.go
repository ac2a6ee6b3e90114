package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/parkinglot/parkinglot/replay"
)

// TestCanaryJSONLinesStayWholeAndInOrder: with -o json a canary step's
// line comes after the events of its step, whole, however many events
// came before it (they are buffered: a line written beside the buffer
// landed inside a half-flushed event once they passed 4 KiB).
func TestCanaryJSONLinesStayWholeAndInOrder(t *testing.T) {
	const perStep = 100 // ~10 KiB of events a step
	s := &fakeSession{canary: func(o replay.CanaryOptions) (replay.Result, []replay.CanaryStep, error) {
		var res replay.Result
		var steps []replay.CanaryStep
		for step := 1; step <= 2; step++ {
			for i := range perStep {
				id := fmt.Sprintf("message-%d-%03d", step, i)
				o.Progress(replay.Event{Kind: replay.EventReplayed, ID: id, Done: res.Done + 1, Total: 2 * perStep})
				res.Done++
			}
			st := replay.CanaryStep{Step: step, Replayed: perStep, Watched: step * perStep}
			if o.OnWait != nil {
				o.OnWait(0, st)
			}
			o.OnStep(st)
			steps = append(steps, st)
		}
		return res, steps, nil
	}}
	f, b := fakeFactory(t, s)
	if code := run(context.Background(), f, []string{"-o", "json", "replay", "q.dlq", "--all", "--canary", "100", "--canary-wait", "1s", "--yes"}); code != 0 {
		t.Fatalf("exit %d\nstderr %s", code, b.err.String())
	}
	var kinds []string
	for i, line := range strings.Split(strings.TrimSuffix(b.out.String(), "\n"), "\n") {
		var obj struct {
			Event string `json:"event"`
			Step  int    `json:"step"`
		}
		if err := json.Unmarshal([]byte(line), &obj); err != nil {
			t.Fatalf("line %d is not one JSON object: %v\n%s", i+1, err, line)
		}
		if obj.Event == "canary" {
			kinds = append(kinds, fmt.Sprintf("%d:canary %d", i, obj.Step))
		}
	}
	if want := []string{"100:canary 1", "201:canary 2"}; fmt.Sprint(kinds) != fmt.Sprint(want) {
		t.Errorf("canary lines at %v, want %v (after the 100 events of each step)", kinds, want)
	}
}
