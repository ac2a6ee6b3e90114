package cli

import (
	"bytes"
	"context"
	"maps"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/parkinglot/parkinglot/ui/alerting"
	"github.com/parkinglot/parkinglot/ui/iostreams"
)

func TestAlertRulesFlags(t *testing.T) {
	var out, errOut bytes.Buffer
	f := NewFactory(&iostreams.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
	if code := run(context.Background(), f, []string{"--config", "", "alert-rules", "--oldest-threshold", "30m", "--job", "w"}); code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	if !strings.Contains(out.String(), "parkinglot_oldest_parked_age_seconds > 1800") || !strings.Contains(out.String(), `up{job="w"}`) {
		t.Errorf("rules:\n%s", out.String())
	}
	out.Reset()
	if code := run(context.Background(), f, []string{"--config", "", "alert-rules", "--growing-window", "0s"}); code != ExitUsage {
		t.Errorf("a zero window: exit %d, want %d", code, ExitUsage)
	}
}

// TestAlertRulesRefusesDurationsUnderASecond: every duration flag under
// 1s is a usage error (exit 2, one line) and prints no rules; a for: may
// be 0, and 1s is enough.
func TestAlertRulesRefusesDurationsUnderASecond(t *testing.T) {
	for _, tc := range []struct {
		args []string
		err  string
	}{
		{[]string{"--growing-window", "500us"}, "alert-rules: --growing-window must be at least 1s, not 500µs"},
		{[]string{"--growing-window", "0s"}, "alert-rules: --growing-window must be at least 1s, not 0s"},
		{[]string{"--not-empty-for", "1us"}, "alert-rules: --not-empty-for must be at least 1s, not 1µs"},
		{[]string{"--not-empty-for", "0s"}, "alert-rules: --not-empty-for must be at least 1s, not 0s"},
		{[]string{"--oldest-threshold", "999ms"}, "alert-rules: --oldest-threshold must be at least 1s, not 999ms"},
		{[]string{"--new-group-window", "-1h"}, "alert-rules: --new-group-window must be at least 1s, not -1h0m0s"},
		{[]string{"--oldest-for", "1ms"}, "alert-rules: --oldest-for must be 0 or at least 1s, not 1ms"},
		{[]string{"--watch-down-for", "-5m"}, "alert-rules: --watch-down-for must be 0 or at least 1s, not -5m0s"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var out, errOut bytes.Buffer
			f := NewFactory(&iostreams.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
			code := run(context.Background(), f, append([]string{"--config", "", "alert-rules"}, tc.args...))
			if code != ExitUsage || !strings.Contains(errOut.String(), tc.err) ||
				strings.Count(strings.TrimSpace(errOut.String()), "\n") != 0 || out.Len() != 0 {
				t.Errorf("exit %d, stdout %q, stderr %q; want %d and one line with %q", code, out.String(), errOut.String(), ExitUsage, tc.err)
			}
		})
	}
	var out, errOut bytes.Buffer
	f := NewFactory(&iostreams.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
	args := []string{"--config", "", "alert-rules", "--not-empty-for", "1s", "--growing-window", "1s", "--oldest-threshold", "1s",
		"--new-group-window", "1s", "--oldest-for", "0s", "--watch-down-for", "1s"}
	if code := run(context.Background(), f, args); code != ExitOK {
		t.Fatalf("durations of 1s (a for: of 0): exit %d: %s", code, errOut.String())
	}
	if !strings.Contains(out.String(), "delta(parkinglot_parked_messages[1s]) > 0") || !strings.Contains(out.String(), "for: 0s") {
		t.Errorf("rules:\n%s", out.String())
	}
}

// TestAlertRulesNewFlagsBecomeOptions: --severity, --label, --threshold,
// --runbook-url, --hold-for and --new-group-for reach the rules' options;
// without them, today's severities and no labels, thresholds nor runbook.
func TestAlertRulesNewFlagsBecomeOptions(t *testing.T) {
	f, _ := testFactory(t)
	var got *AlertRulesOptions
	cmd := NewCmdAlertRules(f, func(_ context.Context, o *AlertRulesOptions) error { got = o; return nil })
	cmd.SetArgs([]string{"--severity", "critical", "--severity", "ParkingLotGrowing=info", "--label", "team=payments",
		"--label", "service=ledger=v2", "--threshold", "noisy.dlq=5", "--threshold", "a=b.dlq=0",
		"--runbook-url", "https://wiki.example/parkinglot#alerts", "--hold-for", "2h", "--new-group-for", "0s"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	r := got.Rules
	wantSev := map[string]string{alerting.AlertNotEmpty: "critical", alerting.AlertGrowing: "info", alerting.AlertOldMessage: "warning",
		alerting.AlertNewErrorGroup: "warning", alerting.AlertWatchDown: "critical", alerting.AlertDeliveryLimit: "warning"}
	if !maps.Equal(r.Severity, wantSev) || !maps.Equal(r.Labels, map[string]string{"team": "payments", "service": "ledger=v2"}) ||
		!maps.Equal(r.Thresholds, map[string]int{"noisy.dlq": 5, "a=b.dlq": 0}) || r.RunbookURL != "https://wiki.example/parkinglot#alerts" ||
		r.HoldFor != 2*time.Hour || r.NewGroupFor != 0 {
		t.Errorf("options %+v", r)
	}

	f, _ = testFactory(t)
	cmd = NewCmdAlertRules(f, func(_ context.Context, o *AlertRulesOptions) error { got = o; return nil })
	cmd.SetArgs([]string{"--new-group-window", "4m"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	d := alerting.Defaults()
	if r := got.Rules; !maps.Equal(r.Severity, d.Severity) || r.Labels != nil || r.Thresholds != nil || r.RunbookURL != "" ||
		r.HoldFor != time.Hour || r.NewGroupFor != 2*time.Minute {
		t.Errorf("defaults %+v (a window of 4m: a for: of 2m)", r)
	}
}

// TestAlertRulesRefusesBadLabelsSeveritiesThresholdsAndRunbooks: each is
// a usage error of one line that says what is wrong, and prints no rules.
func TestAlertRulesRefusesBadLabelsSeveritiesThresholdsAndRunbooks(t *testing.T) {
	for _, tc := range []struct {
		args []string
		err  string
	}{
		{[]string{"--label", "team"}, `--label "team": want NAME=VALUE`},
		{[]string{"--label", "team-a=x"}, `--label "team-a=x": label name "team-a": Prometheus takes letters, digits and _, not starting with a digit`},
		{[]string{"--label", "1team=x"}, `label name "1team": Prometheus takes letters, digits and _`},
		{[]string{"--label", "=x"}, `label name "": Prometheus takes letters`},
		{[]string{"--label", "__name__=x"}, `names starting with __ are Prometheus's own`},
		{[]string{"--label", "severity=high"}, `--label "severity=high": label "severity" is the rules' own`},
		{[]string{"--label", "queue=x"}, `label "queue" is the rules' own`},
		{[]string{"--label", "team=a", "--label", "team=b"}, "--label team given twice"},
		{[]string{"--severity", ""}, `--severity "": a severity is a non-empty UTF-8 label value`},
		{[]string{"--severity", "ParkingLotGrowing="}, "a severity is a non-empty"},
		{[]string{"--severity", "Growing=info"}, `--severity "Growing=info": no alert "Growing" (ParkingLotNotEmpty, ParkingLotGrowing,`},
		{[]string{"--threshold", "noisy.dlq"}, `--threshold "noisy.dlq": want QUEUE=N`},
		{[]string{"--threshold", "=5"}, `--threshold "=5": want QUEUE=N`},
		{[]string{"--threshold", "noisy.dlq=-1"}, "N must be a whole number of messages, 0 or more"},
		{[]string{"--threshold", "noisy.dlq=2.5"}, "N must be a whole number of messages"},
		{[]string{"--threshold", "q=1", "--threshold", "q=2"}, "--threshold for q given twice"},
		{[]string{"--runbook-url", "wiki/parkinglot"}, `--runbook-url "wiki/parkinglot": want an absolute http(s) URL`},
		{[]string{"--runbook-url", "ftp://h/x"}, "want an absolute http(s) URL"},
		{[]string{"--hold-for", "10ms"}, "--hold-for must be 0 or at least 1s, not 10ms"},
		{[]string{"--new-group-for", "1h"}, "--new-group-for 1h0m0s must be shorter than --new-group-window 1h0m0s"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var out, errOut bytes.Buffer
			f := NewFactory(&iostreams.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
			code := run(context.Background(), f, append([]string{"--config", "", "alert-rules"}, tc.args...))
			if code != ExitUsage || !strings.Contains(errOut.String(), tc.err) ||
				strings.Count(strings.TrimSpace(errOut.String()), "\n") != 0 || out.Len() != 0 {
				t.Errorf("exit %d, stdout %q, stderr %q; want %d and one line with %q", code, out.String(), errOut.String(), ExitUsage, tc.err)
			}
		})
	}
}

// TestAlertRulesPrintsWhatTheFlagsSay: the printed file carries the
// labels, severities, runbook and thresholds given.
func TestAlertRulesPrintsWhatTheFlagsSay(t *testing.T) {
	var out, errOut bytes.Buffer
	f := NewFactory(&iostreams.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
	args := []string{"--config", "", "alert-rules", "--label", "team=payments", "--severity", "ParkingLotWatchDown=critical",
		"--runbook-url", "https://wiki.example/rb", "--threshold", "noisy.dlq=5"}
	if code := run(context.Background(), f, args); code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	var file alerting.File
	if err := yaml.Unmarshal(out.Bytes(), &file); err != nil {
		t.Fatal(err)
	}
	for _, r := range file.Groups[0].Rules {
		if r.Labels["team"] != "payments" || r.Annotations["runbook_url"] != "https://wiki.example/rb" {
			t.Errorf("%s: labels %v, annotations %v", r.Alert, r.Labels, r.Annotations)
		}
		if r.Alert == alerting.AlertWatchDown && r.Labels["severity"] != "critical" || r.Alert == alerting.AlertNotEmpty && r.Labels["severity"] != "page" {
			t.Errorf("%s: severity %q", r.Alert, r.Labels["severity"])
		}
		if r.Alert == alerting.AlertNotEmpty && !strings.HasPrefix(r.Expr, `parkinglot_parked_messages{queue="noisy.dlq"} > 5 or parkinglot_parked_messages{queue!="noisy.dlq"} > 0`) {
			t.Errorf("not empty: %s", r.Expr)
		}
	}
}
