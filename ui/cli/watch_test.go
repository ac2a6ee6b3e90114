package cli

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestWatchFlags: the watch's flags reach its options with their
// defaults, and bad values are usage errors (exit 2, one line) before
// anything listens or dials.
func TestWatchFlags(t *testing.T) {
	f, _ := testFactory(t)
	var got *WatchOptions
	cmd := NewCmdWatch(f, func(_ context.Context, o *WatchOptions) error { got = o; return nil })
	cmd.SetArgs([]string{"a.dlq", "b.dlq", "--vhost", "/", "--vhost", "payments", "--interval", "5s"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if strings.Join(got.Queues, ",") != "a.dlq,b.dlq" || strings.Join(got.Vhosts, ",") != "/,payments" ||
		got.Interval != 5*time.Second || got.ScanInterval != 5*time.Minute || got.TopGroups != 10 ||
		got.Listen != "127.0.0.1:9188" || got.NoDiscover {
		t.Errorf("options %+v", got)
	}

	for _, tc := range []struct {
		args []string
		err  string
	}{
		{[]string{"watch", "--no-discover"}, "--no-discover needs the QUEUEs"},
		{[]string{"watch", "--interval", "0s"}, "--interval must be at least 1s, not 0s"},
		{[]string{"watch", "--interval", "1ms", "--scan-interval", "1ms"}, "--interval must be at least 1s, not 1ms"},
		{[]string{"watch", "--interval", "999ms"}, "--interval must be at least 1s, not 999ms"},
		{[]string{"watch", "--interval", "1s", "--scan-interval", "500ms"}, "--scan-interval must be at least 1s, not 500ms"},
		{[]string{"watch", "--interval", "1m", "--scan-interval", "30s"}, "--scan-interval (30s) must be at least --interval (1m0s)"},
		{[]string{"watch", "--top-groups", "0"}, "--top-groups must be at least 1"},
		{[]string{"watch", "--vhost", ""}, "--vhost needs a name"},
		{[]string{"watch", "--listen", "bogus::::"}, `--listen "bogus::::": want HOST:PORT or :PORT`},
		{[]string{"watch", "--listen", "9188"}, `--listen "9188"`},
		{[]string{"alert-rules", "-o", "json"}, "-o json does not apply"},
		{[]string{"daemon", "-f", "x", "--watch-interval", "0s", "--exec", "y"}, "--watch-interval must be at least 1s, not 0s"},
		{[]string{"daemon", "-f", "x", "--watch-interval", "1ms", "--exec", "y"}, "--watch-interval must be at least 1s, not 1ms"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			f, b := testFactory(t)
			f.ConfigPath = ""
			if code := run(context.Background(), f, tc.args); code != 2 || !strings.Contains(b.err.String(), tc.err) ||
				strings.Count(strings.TrimSpace(b.err.String()), "\n") != 0 {
				t.Errorf("exit %d, stderr %q; want 2 and one line with %q", code, b.err.String(), tc.err)
			}
		})
	}
}
