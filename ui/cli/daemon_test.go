package cli

import (
	"context"
	"strings"
	"testing"
)

// Every order of the daemon's flags either works or is refused at start
// with one line: a daemon flag typed after --exec CMD never silently
// becomes the handler's argument.
func TestDaemonFlagOrders(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		exec    string // the handler's argv, when it runs
		metrics string
		err     string // the one line, when refused (exit 2)
	}{
		{args: []string{"-f", "p.yaml", "--metrics-addr", ":9191", "--exec", "./h.sh"}, exec: "./h.sh", metrics: ":9191"},
		{args: []string{"--metrics-addr=:9191", "-f", "p.yaml", "--exec", "./h.sh", "a"}, exec: "./h.sh a", metrics: ":9191"},
		{args: []string{"-f", "p.yaml", "--http", "http://h/", "--metrics-addr", ":9191"}, metrics: ":9191"},
		{args: []string{"--http", "http://h/", "--metrics-addr", ":9191", "-f", "p.yaml"}, metrics: ":9191"},
		{args: []string{"-f", "p.yaml", "--exec", "./h.sh", "--its-flag", "-v"}, exec: "./h.sh --its-flag -v"},
		{args: []string{"-f", "p.yaml", "--exec", "--", "./h.sh", "--metrics-addr", ":1"}, exec: "./h.sh --metrics-addr :1"},
		{args: []string{"-f", "p.yaml", "--exec", "./h.sh", "--", "--metrics-addr", ":1"}, exec: "./h.sh -- --metrics-addr :1"},
		{args: []string{"-f", "p.yaml", "--exec", "./h.sh", "--metrics-addr", ":9191"},
			err: "daemon: --metrics-addr after --exec is passed to the handler; put daemon flags before --exec, or use --exec -- CMD… to pass it on"},
		{args: []string{"-f", "p.yaml", "--exec", "./h.sh", "--metrics-addr=:9191"}, err: "daemon: --metrics-addr after --exec"},
		{args: []string{"--exec", "./h.sh", "-f", "p.yaml"}, err: "daemon: -f after --exec is passed to the handler"},
		{args: []string{"-f", "p.yaml", "--exec", "./h.sh", "x", "--watch-interval", "5s"}, err: "daemon: --watch-interval after --exec"},
		{args: []string{"-f", "p.yaml", "--exec", "./h.sh", "--http", "u"}, err: "daemon: --http after --exec"},
		{args: []string{"-f", "p.yaml", "--exec", "./h.sh", "--log-level", "debug"}, err: "daemon: --log-level after --exec"},
		{args: []string{"-f", "p.yaml", "--exec", "./h.sh", "-o", "json"}, err: "daemon: -o after --exec"},
		{args: []string{"-f", "p.yaml", "./h.sh", "--metrics-addr", ":9191"}, err: "daemon: unexpected arguments"},
		{args: []string{"-f", "p.yaml", "--http", "http://h/", "./h.sh"}, err: "daemon: unexpected arguments"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			f, b := testFactory(t)
			f.ConfigPath = ""
			var got *DaemonOptions
			root := NewCmdRoot(f)
			for _, c := range root.Commands() {
				if c.Name() == "daemon" {
					root.RemoveCommand(c)
				}
			}
			root.AddCommand(NewCmdDaemon(f, func(_ context.Context, o *DaemonOptions) error { got = o; return nil }))
			root.SetArgs(append([]string{"daemon"}, tc.args...))
			root.SetOut(f.IOStreams.Out)
			root.SetErr(f.IOStreams.ErrOut)
			err := root.ExecuteContext(context.Background())
			if tc.err != "" {
				if err == nil || ExitCode(err) != ExitUsage || !strings.Contains(err.Error(), tc.err) || strings.Contains(err.Error(), "\n") {
					t.Fatalf("err %v (exit %d), want one line with %q", err, ExitCode(err), tc.err)
				}
				if got != nil {
					t.Fatal("the daemon ran")
				}
				return
			}
			if err != nil {
				t.Fatalf("refused: %v; stderr %q", err, b.err.String())
			}
			if strings.Join(got.Exec, " ") != tc.exec || got.MetricsAddr != tc.metrics || got.File != "p.yaml" {
				t.Errorf("exec %q metrics %q file %q; want exec %q metrics %q", got.Exec, got.MetricsAddr, got.File, tc.exec, tc.metrics)
			}
		})
	}
}

// The usage line shows the order that works: the daemon's flags first,
// the handler last.
func TestDaemonUsageShowsTheOrderThatWorks(t *testing.T) {
	f, _ := testFactory(t)
	use := NewCmdDaemon(f, nil).Use
	if !strings.HasPrefix(use, "daemon -f PIPELINE.yaml [--metrics-addr ADDR]") || !strings.HasSuffix(use, "(--exec CMD… | --http URL)") {
		t.Errorf("usage %q", use)
	}
}
