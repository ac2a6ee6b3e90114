package alerting

import (
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/parkinglot/parkinglot/replay/watch"
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
	if len(f.Groups) != 1 || len(f.Groups[0].Rules) != len(Alerts) {
		t.Fatalf("groups %+v", f.Groups)
	}
	for i, r := range f.Groups[0].Rules {
		if r.Alert != Alerts[i] || r.Expr == "" || r.Annotations["summary"] == "" || r.Labels["severity"] == "" {
			t.Errorf("rule %d: %+v", i, r)
		}
		if r.Alert != AlertWatchDown && !strings.Contains(r.Annotations["command"], "parkinglot --vhost ") {
			t.Errorf("%s: no command that opens the parking lot: %q", r.Alert, r.Annotations["command"])
		}
	}
}

// TestRulesFollowTheirOptions: each option is where it belongs; an
// alert's own condition comes first, before the hold.
func TestRulesFollowTheirOptions(t *testing.T) {
	o := Defaults()
	o.Job, o.OldestThreshold, o.GrowingWindow, o.NotEmptyFor, o.NewGroupFor = "dlq-watch", 30*time.Minute, 90*time.Second, 0, 0
	rules := Rules(o).Groups[0].Rules
	own := func(r Rule) string { return strings.SplitN(r.Expr, "\nor\n", 2)[0] }
	if got := own(rules[2]); got != "parkinglot_oldest_parked_age_seconds > 1800" {
		t.Errorf("old message: %q", got)
	}
	if got := own(rules[1]); got != "delta(parkinglot_parked_messages[1m30s]) > 0" {
		t.Errorf("growing: %q", got)
	}
	if rules[0].For != "0s" || rules[3].For != "0s" {
		t.Errorf("not empty for %q, new error group for %q", rules[0].For, rules[3].For)
	}
	if got := rules[3].Expr; !strings.Contains(got, "unless parkinglot_parked_messages_by_error offset 1h") ||
		!strings.Contains(got, "and on(job, instance, vhost, queue) (count by(job, instance, vhost, queue) (parkinglot_parked_messages_by_error offset 1h) or parkinglot_parked_messages offset 1h == 0)") {
		t.Errorf("new error group: %q, want a group absent an hour ago, when the parking lot's groups were known", got)
	}
	if got := own(rules[3]); !strings.HasPrefix(got, "sum by(vhost, error_group) (max without(job, instance) (") {
		t.Errorf("new error group: %q, want one alert per error and vhost, a parking lot counted once", got)
	}
	if !strings.Contains(rules[4].Expr, `up{job="dlq-watch"} == 0`) {
		t.Errorf("watch down: %q", rules[4].Expr)
	}
}

// TestRulesDefaults: the watch-down alert pages within a minute (the
// alerts it fed are frozen meanwhile), a new error group must last 5
// minutes, and the severities are page for a parking lot not empty and the
// watch down, warning for the rest.
func TestRulesDefaults(t *testing.T) {
	want := map[string][2]string{
		AlertNotEmpty: {"2m", "page"}, AlertGrowing: {"15m", "warning"}, AlertOldMessage: {"5m", "warning"},
		AlertNewErrorGroup: {"5m", "warning"}, AlertWatchDown: {"1m", "page"}, AlertDeliveryLimit: {"5m", "warning"},
	}
	for _, r := range Rules(Defaults()).Groups[0].Rules {
		if got := [2]string{r.For, r.Labels["severity"]}; got != want[r.Alert] {
			t.Errorf("%s: for, severity %v, want %v", r.Alert, got, want[r.Alert])
		}
	}
}

// TestRulesHoldOnlyTheParkingLotAlerts: every parking-lot alert holds
// (while its target is silent, up to HoldFor) the alerts that fire, by
// their own name; the watch-down alert does not; HoldFor 0 holds nothing.
func TestRulesHoldOnlyTheParkingLotAlerts(t *testing.T) {
	for _, r := range Rules(Defaults()).Groups[0].Rules {
		holds := strings.Contains(r.Expr, `ALERTS{alertname="`+r.Alert+`", alertstate="firing"}`) && strings.Contains(r.Expr, "[1h")
		if holds != (r.Alert != AlertWatchDown) {
			t.Errorf("%s holds: %v\n%s", r.Alert, holds, r.Expr)
		}
	}
	o := Defaults()
	o.HoldFor = 0
	for _, r := range Rules(o).Groups[0].Rules {
		if strings.Contains(r.Expr, "ALERTS") || strings.Contains(r.Expr, "last_over_time") {
			t.Errorf("%s holds with HoldFor 0:\n%s", r.Alert, r.Expr)
		}
	}
}

// TestRulesUseTheWatchsMetricNames: the expressions and annotations name
// the metrics the watch exports, from its constants, and no other.
func TestRulesUseTheWatchsMetricNames(t *testing.T) {
	b, err := Rules(Defaults()).YAML()
	if err != nil {
		t.Fatal(err)
	}
	known := map[string]bool{}
	for _, m := range []string{watch.MetricParked, watch.MetricOldestAge, watch.MetricByError, watch.MetricGroupAge,
		watch.MetricArrivals, watch.MetricLastRead, watch.MetricLastScan, watch.MetricErrors, watch.MetricReady, watch.MetricLimit, watch.MetricAgeBound} {
		known[m] = true
	}
	for _, w := range strings.FieldsFunc(string(b), func(r rune) bool {
		return !(r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9')
	}) {
		if strings.HasPrefix(w, "parkinglot_") && !known[w] {
			t.Errorf("the rules name %q, which the watch does not export", w)
		}
	}
}

// TestRulesLabelsSeverityRunbookAndThresholds: the extra labels and the
// runbook are on every alert; a severity given replaces that alert's; a
// queue's threshold is matched by its exact name, and every other queue
// keeps 0.
func TestRulesLabelsSeverityRunbookAndThresholds(t *testing.T) {
	o := Defaults()
	o.Labels = map[string]string{"team": "payments"}
	o.RunbookURL = "https://wiki.example/parkinglot"
	o.Severity[AlertGrowing] = "info"
	o.Thresholds = map[string]int{`b "x".dlq`: 10, "a.dlq": 3}
	for _, r := range Rules(o).Groups[0].Rules {
		if r.Labels["team"] != "payments" || r.Annotations["runbook_url"] != o.RunbookURL {
			t.Errorf("%s: labels %v, runbook %q", r.Alert, r.Labels, r.Annotations["runbook_url"])
		}
		if want := map[string]string{AlertGrowing: "info", AlertNotEmpty: "page"}[r.Alert]; want != "" && r.Labels["severity"] != want {
			t.Errorf("%s: severity %q, want %q", r.Alert, r.Labels["severity"], want)
		}
		if r.Alert == AlertNotEmpty {
			want := `parkinglot_parked_messages{queue="a.dlq"} > 3 or parkinglot_parked_messages{queue="b \"x\".dlq"} > 10 or ` +
				`parkinglot_parked_messages{queue!="a.dlq",queue!="b \"x\".dlq"} > 0`
			if got := strings.SplitN(r.Expr, "\nor\n", 2)[0]; got != want {
				t.Errorf("not empty: %q, want %q", got, want)
			}
		}
	}
	if r := Rules(Defaults()).Groups[0].Rules[0]; r.Annotations["runbook_url"] != "" || len(r.Labels) != 1 {
		t.Errorf("without options: labels %v, runbook %q", r.Labels, r.Annotations["runbook_url"])
	}
}

func TestCheckLabel(t *testing.T) {
	for _, c := range []struct{ name, value, err string }{
		{"team", "payments", ""},
		{"_x9", "", ""},
		{"9team", "a", "Prometheus takes letters, digits and _"},
		{"team-a", "a", "Prometheus takes letters, digits and _"},
		{"", "a", "Prometheus takes letters, digits and _"},
		{"__name__", "a", "Prometheus's own"},
		{"severity", "a", "the rules' own"},
		{"queue", "a", "the rules' own"},
		{"team", "\xff", "not UTF-8"},
	} {
		err := CheckLabel(c.name, c.value)
		if (c.err == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), c.err) {
			t.Errorf("CheckLabel(%q, %q) = %v, want %q", c.name, c.value, err, c.err)
		}
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
	if !strings.HasPrefix(rules[1].Expr, "delta(parkinglot_parked_messages[1ms]) > 0\n") || rules[0].For != "1ms" {
		t.Errorf("growing %q, not empty for %q", rules[1].Expr, rules[0].For)
	}
}
