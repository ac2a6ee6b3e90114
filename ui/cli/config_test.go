package cli

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// TestConfigFileExitStatuses: a config file named with --config must exist;
// the default path may be absent. Every mistake in the configuration (a
// missing named file, an unknown key, a bad value, an unknown context) is
// one kind of mistake: one line, exit 2. Nothing is dialled.
func TestConfigFileExitStatuses(t *testing.T) {
	// The default path ($XDG_CONFIG_HOME/parkinglot/config.yaml) is absent.
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	dir := t.TempDir()
	missing := filepath.Join(dir, "nope", "config.yaml")
	file := func(name, text string) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := writeFile(p, text); err != nil {
			t.Fatal(err)
		}
		return p
	}
	badKey := file("bad-key.yaml", "contexts:\n  prod:\n    colour: red\n")
	badRate := file("bad-rate.yaml", "parking_lots:\n  q: {rate: fast}\n")
	good := file("good.yaml", "contexts:\n  prod: {url: \"amqp://h1:5672/\"}\n")
	for _, tc := range []struct {
		name string
		args []string
		code int
		err  string
	}{
		{"a named file that does not exist", []string{"--config", missing, "alert-rules"}, ExitUsage, "config file " + missing + " does not exist"},
		{"the default path absent", []string{"alert-rules"}, ExitOK, ""},
		{"an unknown key", []string{"--config", badKey, "alert-rules"}, ExitUsage, `line 3: unknown key "colour" in a context`},
		{"a bad value", []string{"--config", badRate, "alert-rules"}, ExitUsage, `"fast" is not a number`},
		{"an unknown context", []string{"--config", good, "--context", "staging", "alert-rules"}, ExitUsage, `no context "staging" in the config (known: prod)`},
		{"a named file that exists", []string{"--config", good, "alert-rules"}, ExitOK, ""},
		{"--config \"\": no file", []string{"--config", "", "alert-rules"}, ExitOK, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, b := testFactory(t)
			code := run(context.Background(), f, tc.args)
			stderr := b.err.String()
			if code != tc.code {
				t.Fatalf("exit %d, want %d; stderr %q", code, tc.code, stderr)
			}
			if tc.err == "" {
				return
			}
			if !strings.Contains(stderr, tc.err) {
				t.Errorf("stderr %q, want %q", stderr, tc.err)
			}
			if n := strings.Count(strings.TrimSpace(stderr), "\n"); n != 0 {
				t.Errorf("stderr has %d lines, want one: %q", n+1, stderr)
			}
		})
	}
}
