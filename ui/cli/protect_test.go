//go:build integration

package cli_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/broker/brokertest"
	"github.com/parkinglot/parkinglot/ui/cli/clitest"
)

// TestProtectLiftsTheDeliveryLimitOfALotFilledByIt: a quorum parking lot
// filled by the delivery limit at the broker's defaults, under a policy of
// the team's own (max-length). On 4.x `protect` asks first (no terminal,
// no --yes: exit 2, nothing changed), then with --yes puts a policy one
// priority above theirs that keeps max-length and makes the limit
// unlimited, writes the audit log, and touches no message; run again it
// has nothing to do. On 3.x the lot has no limit: nothing to do; one set by
// a policy stays (a 3.x policy cannot say -1), exit 1 saying why.
func TestProtectLiftsTheDeliveryLimitOfALotFilledByIt(t *testing.T) {
	const n = 5
	v := brokertest.Version(t)
	lot := brokertest.Name(t, "lot")
	brokertest.ParkByDeliveryLimit(t, lot, n)
	ours := broker.LiftPolicyName(lot)
	t.Cleanup(func() {
		_ = brokertest.ManagementRequest(http.MethodDelete, "/policies/%2F/"+url.PathEscape(ours), nil)
	})
	pattern := "^" + strings.ReplaceAll(lot, ".", `\.`) + "$"
	theirs := map[string]any{"max-length": 1000}
	if !v.AtLeast(4, 0, 0) {
		theirs["delivery-limit"] = 50 // 3.x: no default limit; this one a policy set
	}
	theirsName := brokertest.Name(t, "theirs")
	if err := brokertest.PutPolicy(t, theirsName, pattern, theirs); err != nil {
		t.Fatal(err)
	}
	mgmt := brokertest.Management(t)
	queue := func() broker.QueueInfo {
		t.Helper()
		q, err := mgmt.Queue(context.Background(), lot)
		if err != nil {
			t.Fatal(err)
		}
		return q
	}
	limitNow := func() broker.DeliveryLimit { return broker.EffectiveDeliveryLimit(queue(), v) }
	brokertest.Eventually(t, 10*time.Second, 100*time.Millisecond, func() bool { return queue().Policy == theirsName },
		func() string { return "the team's policy never applied: " + queue().Policy })
	audit := filepath.Join(t.TempDir(), "audit.jsonl")
	c := clitest.NewCLI(t, "PARKINGLOT_AUDIT_LOG="+audit)

	if !v.AtLeast(4, 0, 0) {
		r := c.Run("", "protect", lot, "--yes")
		if r.Code != 1 || !strings.Contains(r.Stderr, "refuses -1 in a policy") || strings.Count(strings.TrimSpace(r.Stderr), "\n") > 0 {
			t.Fatalf("RabbitMQ %s, a limit set by a policy: exit %d, stderr %q; want 1 and one line saying why", v, r.Code, r.Stderr)
		}
		if l := limitNow(); l.Limit != 50 {
			t.Errorf("the limit changed: %s", l.Source)
		}
		brokertest.WaitDepth(t, lot, n, 10*time.Second)
		return
	}

	before := limitNow()
	r := c.Run("", "protect", lot)
	if r.Code != 2 || !strings.Contains(r.Stdout, "will put policy") || !strings.Contains(r.Stdout, "max-length=1000") {
		t.Fatalf("without a terminal or --yes: exit %d, stdout %q, stderr %q; want the plan and exit 2", r.Code, r.Stdout, r.Stderr)
	}
	if l := limitNow(); l != before {
		t.Fatalf("a refused protect changed the limit: %+v → %+v", before, l)
	}
	if _, err := os.Stat(audit); err == nil {
		t.Errorf("a refused protect wrote the audit log")
	}

	r = c.Run("", "protect", lot, "--yes")
	if r.Code != 0 || !strings.Contains(r.Stdout, "protected "+lot+": delivery limit unlimited") {
		t.Fatalf("protect --yes: exit %d, stdout %q, stderr %q", r.Code, r.Stdout, r.Stderr)
	}
	q := queue()
	if !broker.EffectiveDeliveryLimit(q, v).Unlimited() || q.Policy != ours {
		t.Errorf("after protect: policy %q, limit %+v; want %s, unlimited", q.Policy, broker.EffectiveDeliveryLimit(q, v), ours)
	}
	if ml, _ := q.EffectivePolicy["max-length"].(float64); ml != 1000 {
		t.Errorf("the team's max-length was not kept: %v", q.EffectivePolicy)
	}
	b, err := os.ReadFile(audit)
	if err != nil {
		t.Fatal(err)
	}
	var e struct{ Action, Policy, Result string }
	if err := json.Unmarshal(b, &e); err != nil || e.Action != "protect" || e.Policy != ours || e.Result != "ok" {
		t.Errorf("audit log %q: want one protect entry naming %s", b, ours)
	}
	brokertest.WaitDepth(t, lot, n, 10*time.Second)

	r = c.Run("", "protect", lot, "--yes")
	if r.Code != 0 || !strings.Contains(r.Stdout, "already unlimited") {
		t.Errorf("protect again: exit %d, stdout %q, stderr %q; want nothing to do", r.Code, r.Stdout, r.Stderr)
	}
}
