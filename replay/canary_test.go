package replay

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/retrycore"
)

func TestParseRamp(t *testing.T) {
	if got, err := ParseRamp("1, 10,100"); err != nil || len(got) != 3 || got[2] != 100 {
		t.Errorf("1,10,100: %v %v", got, err)
	}
	for _, bad := range []string{"", "0", "1,x", "10,1", "-2"} {
		if _, err := ParseRamp(bad); !errors.Is(err, ErrBadSelection) {
			t.Errorf("%q: %v, want a usage error", bad, err)
		}
	}
}

func TestCanaryWaitForFollowsThePipeline(t *testing.T) {
	p, err := retrycore.ParsePipeline(strings.NewReader(`name: pay
main:  {exchange: m, queue: q, routing_key: k}
retry: {exchange: r, routing_key: rk, delays: [1s, 5s]}
error: {exchange: e, queue: dlq, routing_key: ek}
max_retries: 3
handler_timeout: 2s
`))
	if err != nil {
		t.Fatal(err)
	}
	// 4 attempts × 2 s + delays 1 s, 5 s, 5 s (the last tier again) + 10 s
	if got, want := CanaryWaitFor(p), 8*time.Second+11*time.Second+10*time.Second; got != want {
		t.Errorf("CanaryWaitFor = %v, want %v", got, want)
	}
}

func TestCameBackErrorSaysHowManyAndTheirGroups(t *testing.T) {
	err := &CameBackError{Step: CanaryStep{Step: 1, Replayed: 2, Watched: 2, CameBack: 2, Groups: map[string]int{"ledger down <n>": 2}}}
	if !errors.Is(err, ErrCameBack) || err.Error() != "2 of 2 message(s) of canary step 1 came back (ledger down <n>); the rest stay parked" {
		t.Errorf("%v", err)
	}
	// A copy of step 1 that came back in step 2's wait.
	err = &CameBackError{Step: CanaryStep{Step: 2, Replayed: 10, Watched: 11, CameBack: 1, Groups: map[string]int{"ledger down <n>": 1}}}
	if err.Error() != "1 of 11 message(s) of canary steps 1–2 came back (ledger down <n>); the rest stay parked" {
		t.Errorf("%v", err)
	}
}

func TestFilterSeesMessagesThatCameBack(t *testing.T) {
	f, err := CompileFilter(`came_back && replay_id == "r-1" && replay_run == "R1"`)
	if err != nil {
		t.Fatal(err)
	}
	back := Summary{ID: "a", Facts: retrycore.Facts{ReplayID: "r-1", ReplayRun: "R1", ReplayCount: 1, CameBack: true}}
	if ok, err := f.Match(broker.Message{}, back, "q", time.Now()); !ok || err != nil {
		t.Errorf("a message that came back: %v %v", ok, err)
	}
	if ok, _ := f.Match(broker.Message{}, Summary{ID: "b"}, "q", time.Now()); ok {
		t.Error("a message never replayed matched came_back")
	}
}
