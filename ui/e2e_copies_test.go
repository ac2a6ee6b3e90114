//go:build integration

package ui

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/parkinglot/parkinglot/broker/brokertest"
	"github.com/parkinglot/parkinglot/ui/cli/clitest"
)

// TestTUIDialogsCountEveryCopy drives the real binary in tmux against
// the real broker, on a parking lot the demo filled twice, so that every
// id is carried by two messages: each dialog (a group's replay, a row's
// replay, delete and export) says how many messages it takes, and the
// queues show it took exactly that many. The export, run from another
// directory, says the absolute path it wrote; esc back to the queues
// puts the cursor on the parking lot opened by name.
func TestTUIDialogsCountEveryCopy(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Fatal("the end-to-end test needs tmux (make broker installs it): ", err)
	}
	ch := brokertest.Channel(t) // fails loudly without a broker
	brokertest.Management(t)
	bin := clitest.Binary(t)
	home := t.TempDir()
	suffix := make([]byte, 4)
	_, _ = rand.Read(suffix)
	name := "pltest-copies-" + hex.EncodeToString(suffix)
	lot, mainQueue := name+".error.dlq", name+".main.queue"
	env := append(os.Environ(), "PARKINGLOT_URL="+brokertest.URL(), "PARKINGLOT_MANAGEMENT_URL="+brokertest.ManagementURL(),
		"XDG_CONFIG_HOME="+home, "XDG_STATE_HOME="+home, "NO_COLOR=1")
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("parkinglot %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	t.Cleanup(func() { run("demo", "--name", name, "--clean") })
	for range 2 { // the same payments, the same ids: two copies of each
		if out := run("demo", "--name", name, "--no-tui"); !strings.Contains(out, "17 parked by this run") {
			t.Fatalf("demo did not fill the parking lot:\n%s", out)
		}
	}
	waitDepth(t, ch, lot, 34, "the parking lot after two demos")
	sent := depth(t, ch, mainQueue)

	work := t.TempDir() // where the export lands: the program's working directory
	tm := newTmux(t, env, 160, 40, "cd "+work+" && "+bin+" tui "+lot)
	tm.waitFor("the list", "34 messages")
	tm.waitFor("the browse to end", "all given back")

	// The largest error group: its dialog's count is its rows'.
	tm.keys("g")
	tm.waitFor("the groups", "groups of 34 messages")
	tm.keys("R")
	screen := tm.waitFor("the group's plan", "origin from") // the route, wrapped in the dialog, comes with it
	title := regexp.MustCompile(`Replay (\d+) message\(s\)`).FindStringSubmatch(screen)
	rows := regexp.MustCompile(`group “[^”]*” \((\d+) messages\)`).FindStringSubmatch(screen)
	if title == nil || rows == nil || title[1] != rows[1] {
		t.Fatalf("the dialog's title and its group disagree (%v, %v):\n%s", title, rows, screen)
	}
	n, _ := strconv.Atoi(title[1])
	if n < 2 || n%2 != 0 {
		t.Fatalf("the largest group holds %d messages: want both copies of each id", n)
	}
	tm.keys("Enter")
	tm.waitFor("the group's replay", "replayed "+title[1])
	left := 34 - n
	waitDepth(t, ch, lot, left, "the parking lot after the group's replay")
	waitDepth(t, ch, mainQueue, sent+n, mainQueue+" after the group's replay")
	sent += n

	// One row: its id is carried by two messages, and both go.
	tm.waitFor("the list again", "all given back")
	tm.keys("g")
	tm.waitFor("the rows", strconv.Itoa(left)+" messages")
	tm.keys("r")
	screen = tm.waitFor("the row's plan", "origin from")
	if !strings.Contains(screen, "Replay 2 message(s)") || !strings.Contains(screen, "1 more message(s) carry the id") {
		t.Fatalf("the row's dialog does not count its copy:\n%s", screen)
	}
	tm.keys("Enter")
	tm.waitFor("the row's replay", "replayed 2")
	left -= 2
	waitDepth(t, ch, lot, left, "the parking lot after the row's replay")
	waitDepth(t, ch, mainQueue, sent+2, mainQueue+" after the row's replay")

	tm.waitFor("the list again", "all given back")
	tm.keys("d")
	tm.waitFor("the delete dialog", "Delete 2 message(s)")
	tm.keys("Enter")
	tm.waitFor("the delete", "deleted 2")
	left -= 2
	waitDepth(t, ch, lot, left, "the parking lot after the delete")

	tm.waitFor("the list again", "all given back")
	tm.keys("Space")
	tm.waitFor("the selection", "1 selected")
	tm.keys("x")
	tm.waitFor("the export dialog", "Export 2 message(s)")
	tm.keys("Enter")
	screen = tm.waitFor("the export", "exported 2 to ")
	m := regexp.MustCompile(`exported 2 to (\S+\.jsonl)`).FindStringSubmatch(screen)
	if m == nil {
		t.Fatalf("no path in the result:\n%s", screen)
	}
	wantDir, _ := filepath.EvalSymlinks(work)
	if dir, _ := filepath.EvalSymlinks(filepath.Dir(m[1])); !filepath.IsAbs(m[1]) || dir != wantDir {
		t.Fatalf("the result names %s; want an absolute path in the working directory %s", m[1], work)
	}
	b, err := os.ReadFile(m[1])
	if err != nil {
		t.Fatal(err)
	}
	if lines := strings.Count(strings.TrimSpace(string(b)), "\n") + 1; lines != 2 {
		t.Fatalf("the export holds %d messages, want the 2 counted", lines)
	}
	waitDepth(t, ch, lot, left, "the parking lot after the export")

	// Back to the queues: the cursor is on the parking lot left.
	tm.waitFor("the list again", "all given back")
	tm.keys("Escape") // the selection
	tm.keys("Escape") // the screen
	screen = tm.waitFor("the queues", "parking lot(s)")
	var cursor string
	for _, l := range strings.Split(screen, "\n") {
		if strings.Contains(l, "▸") {
			cursor = l
		}
	}
	if !strings.Contains(cursor, lot) {
		t.Fatalf("the cursor is on %q, want the parking lot %s:\n%s", cursor, lot, screen)
	}

	tm.keys("q")
	tm.waitFor("the program to end", "EXITED:0")
	waitDepth(t, ch, lot, left, "after quitting the parking lot")
}
