package cli

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// A --to that can never route, or that was given empty (an unset shell
// variable), is a usage error on one line before the engine is asked
// anything: the fake session has no methods set, so a call fails the
// test. Without the check, --to "" read as no --to and sent the messages
// to their origin, and a dry run of --to : exited 0.
func TestToEmptyOrWithoutQueueNameIsUsageError(t *testing.T) {
	file := filepath.Join(t.TempDir(), "in.jsonl")
	if err := writeFile(file, `{"queue":"orders","message":{"body":"x"}}`+"\n"); err != nil {
		t.Fatal(err)
	}
	const noKey, empty = "empty routing key reaches no queue", "leave --to out"
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"replay", "orders.dlq", "--all", "--to", ":", "--dry-run"}, noKey},
		{[]string{"replay", "orders.dlq", "--all", "--to", ":", "--yes"}, noKey},
		{[]string{"replay", "orders.dlq", "--all", "--to", "", "--dry-run"}, empty + " to send each message to its origin"},
		{[]string{"replay", "orders.dlq", "--all", "--to=", "--yes"}, empty},
		{[]string{"edit", "orders.dlq", "m-1", "--to", ":"}, noKey},
		{[]string{"edit", "orders.dlq", "m-1", "--to", ""}, empty},
		{[]string{"import", file, "--to", ":", "--yes"}, noKey},
		{[]string{"import", file, "--to", "", "--yes"}, empty + " to send each message to the queue it was exported from"},
	} {
		f, b := fakeFactory(t, &fakeSession{})
		if code := run(context.Background(), f, c.args); code != ExitUsage {
			t.Errorf("%q: exit %d, want %d\nstderr %s", c.args, code, ExitUsage, b.err.String())
			continue
		}
		stderr := strings.TrimSuffix(b.err.String(), "\n")
		if !strings.Contains(stderr, c.want) || strings.Contains(stderr, "\n") || !strings.Contains(stderr, "--to") {
			t.Errorf("%q: stderr %q, want one line naming --to with %q", c.args, stderr, c.want)
		}
	}
}
