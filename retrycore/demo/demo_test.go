package demo

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/parkinglot/parkinglot/retrycore"
	"github.com/parkinglot/parkinglot/retrycore/daemon"
)

// The mix and the handler agree: every message the mix says parks is
// parked (permanently, or after max_retries transient failures), every
// other one is acked within the retries, and the errors fold into groups.
func TestMixAndHandler(t *testing.T) {
	p := NewPipeline(DefaultName, retrycore.QueueClassic)
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	h := Handler()
	seen := map[string]bool{}
	kinds := map[string]int{}
	groups := map[string]int{}
	for _, m := range Mix() {
		if seen[m.ID] {
			t.Fatalf("duplicate id %s", m.ID)
		}
		seen[m.ID] = true
		kinds[m.Kind]++
		parked, lastErr := false, error(nil)
		for attempt := 1; attempt <= p.MaxRetries+1; attempt++ {
			err := h.Handle(context.Background(), daemon.Delivery{MessageID: m.ID, Attempt: attempt, ContentType: m.ContentType, Body: m.Body})
			if err == nil {
				break
			}
			lastErr = err
			var perm *daemon.PermanentError
			if errors.As(err, &perm) || attempt == p.MaxRetries+1 {
				parked = true
				break
			}
		}
		if parked != m.Parks() {
			t.Errorf("%s (%s): parked=%v, want %v (last error %v)", m.ID, m.Kind, parked, m.Parks(), lastErr)
		}
		if parked {
			if !strings.Contains(lastErr.Error(), m.ID) && m.Kind != KindFlakyForever {
				t.Errorf("%s: the error does not name the payment: %v", m.ID, lastErr)
			}
			groups[retrycore.GroupKey(lastErr.Error())]++
		}
	}
	if len(seen) != 45 || kinds[KindGood] != 20 || kinds[KindFlakyThenOK] != 8 || kinds[KindFlakyForever] != 4 {
		t.Fatalf("mix: %d messages, kinds %v", len(seen), kinds)
	}
	// 17 parked messages in a handful of groups: grouping is worth pressing g.
	total := 0
	for _, n := range groups {
		total += n
	}
	if total != 17 || len(groups) > 9 || len(groups) < 5 {
		t.Fatalf("%d parked in %d groups: %v", total, len(groups), groups)
	}
}
