//go:build integration

package cli_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker/brokertest"
	"github.com/parkinglot/parkinglot/retrycore"
	"github.com/parkinglot/parkinglot/retrycore/retrytest"
)

// TestCanaryReplayStopsWhenMessagesComeBack: a real daemon whose handler
// parks every message saying "bug" until the bug is fixed. A canary of 2
// of 20 parked, with the bug still there: both come back, the run exits 4
// and all 20 are parked, the two marked as came back from the run with the
// same error, and `replay --status` says so. Once the bug is fixed: the
// canary passes and the rest are replayed and done.
func TestCanaryReplayStopsWhenMessagesComeBack(t *testing.T) {
	c := newCLI(t)
	p := writePipeline(t, 200*time.Millisecond)
	fixed := filepath.Join(t.TempDir(), "fixed")
	handler := fmt.Sprintf(`if [ ! -e %q ] && grep -q bug; then echo "ledger rejects the bug" >&2; exit 65; fi; cat >/dev/null`, fixed)
	if r := c.Run("", "topology", "declare", "-f", p.file); r.Code != 0 {
		t.Fatalf("topology declare: exit %d %s", r.Code, r.Stderr)
	}
	daemon := c.command("daemon", "-f", p.file, "--exec", "sh", "-c", handler)
	if err := daemon.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = daemon.Process.Kill(); _ = daemon.Wait() })

	ch := brokertest.Channel(t)
	msgs := make([]amqp.Publishing, 20)
	for i := range msgs {
		msgs[i] = amqp.Publishing{MessageId: fmt.Sprintf("pay-%02d", i), Body: []byte(`{"bug":true}`), DeliveryMode: amqp.Persistent}
	}
	brokertest.PublishMany(t, ch, p.Main.Exchange, p.Main.RoutingKey, msgs)
	brokertest.WaitDepth(t, p.Error.Queue, 20, 60*time.Second)

	r := c.Run("", "replay", p.Error.Queue, "--all", "--canary", "2", "--canary-wait", "30s", "--yes")
	if r.Code != 4 || !strings.Contains(r.Stderr, "canary step 1: 2 of 2 came back: 2 × ledger rejects the bug; the rest stay parked") {
		t.Fatalf("canary with the bug: exit %d, want 4\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	run := regexp.MustCompile(`canary run (\S+):`).FindStringSubmatch(r.Stderr)
	if run == nil {
		t.Fatalf("the canary does not name its run:\n%s", r.Stderr)
	}
	brokertest.WaitDepth(t, p.Error.Queue, 20, 30*time.Second)
	r = c.Run("", "list", p.Error.Queue, "-o", "json")
	marked, ids := 0, map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(r.Stdout), "\n") {
		var s struct {
			ID    string `json:"id"`
			Facts struct {
				CameBack  bool   `json:"came_back"`
				ReplayID  string `json:"replay_id"`
				ReplayRun string `json:"replay_run"`
				SameError *bool  `json:"same_error"`
			} `json:"facts"`
		}
		if err := json.Unmarshal([]byte(line), &s); err != nil {
			t.Fatalf("list line %q: %v", line, err)
		}
		ids[s.ID] = true
		if s.Facts.ReplayID == "" {
			continue
		}
		marked++
		if !s.Facts.CameBack || s.Facts.ReplayRun != run[1] || s.Facts.SameError == nil || !*s.Facts.SameError {
			t.Errorf("%s came back: marked %+v, want came back from run %s with the same error", s.ID, s.Facts, run[1])
		}
	}
	if marked != 2 || len(ids) != 20 {
		t.Errorf("%d parked messages carry a replay id, want the 2 that came back; %d distinct ids, want 20", marked, len(ids))
	}
	r = c.Run("", "replay", "--status", run[1])
	want := fmt.Sprintf("run %s: 2 replayed from %s", run[1], p.Error.Queue)
	back := fmt.Sprintf("2 came back to %s, all ledger rejects the bug (2 with the same error as before)", p.Error.Queue)
	if r.Code != 0 || !strings.Contains(r.Stdout, want) || !strings.Contains(r.Stdout, back) {
		t.Errorf("replay --status: exit %d, want %q and %q\n%s%s", r.Code, want, back, r.Stdout, r.Stderr)
	}
	brokertest.WaitDepth(t, p.Error.Queue, 20, 30*time.Second) // --status took nothing

	if err := os.WriteFile(fixed, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	r = c.Run("", "-o", "json", "replay", p.Error.Queue, "--all", "--canary", "2", "--canary-wait", "3s", "--yes")
	if r.Code != 0 || !strings.Contains(r.Stdout, `"event":"canary"`) || !strings.Contains(r.Stdout, `"came_back":0`) {
		t.Fatalf("canary after the fix: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	brokertest.WaitDepth(t, p.Error.Queue, 0, 30*time.Second)
	brokertest.WaitDepth(t, p.Main.Queue, 0, 30*time.Second)
}

// TestCanaryRampOnAQuorumParkingLot: a ramp of 1 then 5 on a quorum
// pipeline whose handler parks every message until a bug is fixed. With
// the bug: the first step's message comes back, the run stops (exit 4)
// and all 30 stay parked. After the fix: each step is watched (the
// parking lot browsed again and again, which must not count toward its
// delivery limit) and none came back, then the rest go; every message is
// handled once it was fixed, and nothing is left parked.
func TestCanaryRampOnAQuorumParkingLot(t *testing.T) {
	c := newCLI(t)
	p := retrytest.Pipeline(t, retrycore.QueueQuorum, 200*time.Millisecond)
	p.MaxRetries = 1
	file := writePipelineFile(t, p)
	dir := t.TempDir()
	fixed, done := filepath.Join(dir, "fixed"), filepath.Join(dir, "done")
	handler := fmt.Sprintf(`if [ ! -e %q ]; then echo "ledger rejects the bug" >&2; exit 65; fi; cat >/dev/null; echo "$PARKINGLOT_MESSAGE_ID" >> %q`, fixed, done)
	if r := c.Run("", "topology", "declare", "-f", file); r.Code != 0 {
		t.Fatalf("topology declare: exit %d %s", r.Code, r.Stderr)
	}
	daemon := c.command("daemon", "-f", file, "--exec", "sh", "-c", handler)
	if err := daemon.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = daemon.Process.Kill(); _ = daemon.Wait() })

	ch := brokertest.Channel(t)
	msgs := make([]amqp.Publishing, 30)
	for i := range msgs {
		msgs[i] = amqp.Publishing{MessageId: fmt.Sprintf("pay-%02d", i), Body: []byte(`{}`), DeliveryMode: amqp.Persistent}
	}
	brokertest.PublishMany(t, ch, p.Main.Exchange, p.Main.RoutingKey, msgs)
	brokertest.WaitDepth(t, p.Error.Queue, 30, 60*time.Second)

	r := c.Run("", "-o", "json", "replay", p.Error.Queue, "--all", "--ramp", "1,5", "--canary-wait", "30s", "--yes")
	if r.Code != 4 || strings.Count(r.Stdout, `"event":"canary"`) != 1 || !strings.Contains(r.Stdout, `"came_back":1`) {
		t.Fatalf("ramp with the bug: exit %d, want 4 after the first step\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	brokertest.WaitDepth(t, p.Error.Queue, 30, 30*time.Second)

	if err := os.WriteFile(fixed, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	r = c.Run("", "-o", "json", "replay", p.Error.Queue, "--all", "--ramp", "1,5", "--canary-wait", "5s", "--yes")
	var steps []string
	for _, line := range strings.Split(strings.TrimSpace(r.Stdout), "\n") {
		if strings.Contains(line, `"event":"canary"`) {
			steps = append(steps, line)
		}
	}
	if r.Code != 0 || len(steps) != 2 || !strings.Contains(steps[0], `"replayed":1,"came_back":0`) || !strings.Contains(steps[1], `"replayed":5,"came_back":0`) {
		t.Fatalf("ramp after the fix: exit %d, want 0 and two steps of 1 and 5 with none back\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	brokertest.WaitDepth(t, p.Error.Queue, 0, 30*time.Second)
	brokertest.WaitDepth(t, p.Main.Queue, 0, 30*time.Second)
	handled := map[string]bool{}
	brokertest.Eventually(t, 30*time.Second, 100*time.Millisecond, func() bool {
		b, _ := os.ReadFile(done)
		for _, id := range strings.Fields(string(b)) {
			handled[id] = true
		}
		return len(handled) == 30
	}, func() string { return fmt.Sprintf("%d of 30 messages handled after the fix", len(handled)) })
}
