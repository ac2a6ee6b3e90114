package cli

import (
	"encoding/json"
	"testing"
	"unicode"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/replay"
	"github.com/parkinglot/parkinglot/retrycore"
)

// TestJSONKeysAreSnakeCase: every object `-o json` prints (WriteJSONLines'
// callers: list, queues, replay and its plan, delete/export previews,
// import's plan, the final result) has snake_case keys, never Go field
// names such as "Seen".
func TestJSONKeysAreSnakeCase(t *testing.T) {
	n := int64(2)
	dest := retrycore.Destination{Exchange: "ex", RoutingKey: "rk"}
	pass := broker.PassReport{Seen: 1, Taken: 1, GivenBack: 1, Refreshed: 1, Notes: []broker.Note{{Kind: broker.NoteNoManagement}}}
	facts := retrycore.Facts{
		Deaths:        []retrycore.Death{{Queue: "q", Reason: "rejected", Count: 1, Exchange: "ex", RoutingKeys: []string{"rk"}, OriginalExpiration: "5"}},
		FirstDeath:    retrycore.DeathRef{Queue: "q", Reason: "rejected", Exchange: "ex"},
		LastDeath:     retrycore.DeathRef{Queue: "q"},
		DeliveryCount: &n, AcquiredCount: &n, Attempts: 2, AttemptsSource: "s", Error: "e", ErrorSource: "x", Problems: []string{"p"},
	}
	sum := replay.Summary{ID: "id", Facts: facts, Origin: &retrycore.Origin{Destination: dest, Source: "s", Queue: "q"}}
	for name, v := range map[string]any{
		"plan": planJSON{Plan: replay.Plan{Queue: "q", Items: []replay.PlanItem{{ID: "id", Destination: dest, Resets: []string{"x-death"}}},
			Refused: []replay.Failure{{ID: "id", Err: "e"}}, Routes: []replay.RoutePreview{{Destination: dest, Queues: []string{"q"}, Available: true}},
			Resets: map[string]int{"x-death": 1}, Report: pass}, Notes: []string{"n"}, Report: newPassJSON(pass)},
		"result":  newResultJSON(replay.Result{Done: 1, Failures: []replay.Failure{{ID: "id", Err: "e"}}, Pass: pass, Notes: []replay.Note{{Kind: replay.NotePass, Pass: pass.Notes[0]}}}),
		"event":   replay.Event{Kind: replay.EventReplayed, ID: "id", Destination: &dest, Resets: []string{"x-death"}},
		"summary": sum,
		"queue":   replay.QueueRow{QueueInfo: broker.QueueInfo{Name: "q"}, ParkingLot: true},
		"import":  replay.ImportPlan{File: "f", Messages: 1, Destinations: []replay.ImportDest{{Destination: dest, Messages: 1}}},
	} {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var tree any
		if err := json.Unmarshal(b, &tree); err != nil {
			t.Fatal(err)
		}
		checkKeys(t, name, tree)
	}
}

func checkKeys(t *testing.T, path string, v any) {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			for _, r := range k {
				if unicode.IsUpper(r) {
					t.Errorf("%s: key %q is not snake_case", path, k)
					break
				}
			}
			checkKeys(t, path+"."+k, x)
		}
	case []any:
		for _, x := range v {
			checkKeys(t, path+"[]", x)
		}
	}
}
