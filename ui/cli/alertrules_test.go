package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"

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
