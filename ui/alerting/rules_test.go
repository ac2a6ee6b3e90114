package alerting

import (
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

func TestRulesHoldEveryAlertWithAnnotations(t *testing.T) {
	b, err := Rules(Defaults()).YAML()
	if err != nil {
		t.Fatal(err)
	}
	var f File
	if err := yaml.Unmarshal(b, &f); err != nil {
		t.Fatalf("the printed rules do not parse: %v", err)
	}
	want := []string{AlertNotEmpty, AlertGrowing, AlertOldMessage, AlertNewErrorGroup, AlertWatchDown}
	if len(f.Groups) != 1 || len(f.Groups[0].Rules) != len(want) {
		t.Fatalf("groups %+v", f.Groups)
	}
	for i, r := range f.Groups[0].Rules {
		if r.Alert != want[i] || r.Expr == "" || r.Annotations["summary"] == "" || r.Labels["severity"] == "" {
			t.Errorf("rule %d: %+v", i, r)
		}
		if r.Alert != AlertWatchDown && r.Annotations["command"] != openIt {
			t.Errorf("%s: no command that opens the parking lot: %q", r.Alert, r.Annotations["command"])
		}
	}
}

func TestRulesFollowTheirOptions(t *testing.T) {
	o := Defaults()
	o.Job, o.OldestThreshold, o.GrowingWindow, o.NotEmptyFor = "dlq-watch", 30*time.Minute, 90*time.Second, 0
	rules := Rules(o).Groups[0].Rules
	if got := rules[2].Expr; got != "parkinglot_oldest_parked_age_seconds > 1800" {
		t.Errorf("old message: %q", got)
	}
	if got := rules[1].Expr; got != "delta(parkinglot_parked_messages[1m30s]) > 0" {
		t.Errorf("growing: %q", got)
	}
	if rules[0].For != "0s" {
		t.Errorf("not empty for: %q", rules[0].For)
	}
	if got := rules[3].Expr; !strings.Contains(got, "unless parkinglot_parked_messages_by_error offset 1h") ||
		!strings.Contains(got, "and on(job, instance, vhost, queue) (count by(job, instance, vhost, queue) (parkinglot_parked_messages_by_error offset 1h) or parkinglot_parked_messages offset 1h == 0)") {
		t.Errorf("new error group: %q, want a group absent an hour ago, when the parking lot's groups were known", got)
	}
	if rules[3].For != "" {
		t.Errorf("new error group for: %q, want none", rules[3].For)
	}
	if !strings.Contains(rules[4].Expr, `up{job="dlq-watch"} == 0`) {
		t.Errorf("watch down: %q", rules[4].Expr)
	}
}

// TestPromDurationNeverEmpty: a positive duration under Prometheus's
// millisecond is rounded up, never written as nothing.
func TestPromDurationNeverEmpty(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0: "0s", -time.Second: "0s", time.Microsecond: "1ms", 500 * time.Microsecond: "1ms",
		1500 * time.Microsecond: "2ms", time.Second: "1s", 90 * time.Second: "1m30s",
		time.Hour + time.Second + time.Nanosecond: "1h1s1ms", 15 * time.Minute: "15m",
	} {
		if got := promDuration(d); got != want {
			t.Errorf("promDuration(%s) = %q, want %q", d, got, want)
		}
	}
	o := Defaults()
	o.GrowingWindow, o.NotEmptyFor = 500*time.Microsecond, time.Microsecond
	rules := Rules(o).Groups[0].Rules
	if rules[1].Expr != "delta(parkinglot_parked_messages[1ms]) > 0" || rules[0].For != "1ms" {
		t.Errorf("growing %q, not empty for %q", rules[1].Expr, rules[0].For)
	}
}
