package cli

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"
)

// With --log-format json every line the command line says on stderr (a
// notice, the final error) is a JSON record with time, level and msg, and
// shows no password; a bad --log-format is one text line, exit 2.
func TestLogFormatJSONLines(t *testing.T) {
	f, b, _ := secretFactory(t, "contexts:\n  p: {url: 'amqp://app:pw-secret@h/'}\n", nil)
	if err := os.Chmod(f.ConfigPath, 0o644); err != nil {
		t.Fatal(err)
	}
	code := runConfig(f, []string{"--log-format", "json", "--context", "nope", "alert-rules"})
	lines := strings.Split(strings.TrimSpace(b.err.String()), "\n")
	if code != ExitUsage || len(lines) != 2 {
		t.Fatalf("exit %d, stderr %q; want 2 and two records (the warning, the error)", code, b.err.String())
	}
	for i, want := range []struct{ level, msg string }{{"WARN", "holds a password in clear text"}, {"ERROR", `no context "nope"`}} {
		var r map[string]any
		if err := json.Unmarshal([]byte(lines[i]), &r); err != nil {
			t.Fatalf("line %d is not JSON: %q", i, lines[i])
		}
		if _, err := time.Parse(time.RFC3339Nano, r["time"].(string)); err != nil || r["level"] != want.level || !strings.Contains(r["msg"].(string), want.msg) {
			t.Errorf("record %v, want level %s and msg with %q", r, want.level, want.msg)
		}
		if want.level == "ERROR" && r["exit"] != float64(ExitUsage) {
			t.Errorf("error record's exit %v", r["exit"])
		}
	}
	if strings.Contains(b.err.String(), "pw-secret") {
		t.Error("a password in the log")
	}
	f, b = testFactory(t)
	f.ConfigPath = ""
	if code := runConfig(f, []string{"--log-format", "yaml", "queues"}); code != ExitUsage || b.err.String() != "parkinglot: --log-format \"yaml\": use text or json\n" {
		t.Errorf("exit %d, stderr %q", code, b.err.String())
	}
}
