//go:build integration

package cli_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker/brokertest"
	"github.com/parkinglot/parkinglot/ui/cli/clitest"
)

// terminal runs the parkinglot binary in a pseudo-terminal, as a person
// at a prompt would: stdin, stdout and stderr are the pty, and Ctrl-C
// reaches it as SIGINT through the terminal's line discipline.
type terminal struct {
	t    testing.TB
	pty  *os.File
	cmd  *exec.Cmd
	mu   sync.Mutex
	cond *sync.Cond
	out  bytes.Buffer
	eof  bool
}

func startTerminal(t testing.TB, env []string, args ...string) *terminal {
	t.Helper()
	cmd := clitest.NewCLI(t, env...).Command(context.Background(), args...)
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 120})
	if err != nil {
		t.Fatalf("start in a pty: %v", err)
	}
	tm := &terminal{t: t, pty: f, cmd: cmd}
	tm.cond = sync.NewCond(&tm.mu)
	go tm.read()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = f.Close()
	})
	return tm
}

// read copies the terminal's output into out and wakes waiters.
func (tm *terminal) read() {
	buf := make([]byte, 4096)
	for {
		n, err := tm.pty.Read(buf)
		tm.answerQueries(buf[:n])
		tm.mu.Lock()
		tm.out.Write(buf[:n])
		if err != nil {
			tm.eof = true
		}
		tm.cond.Broadcast()
		tm.mu.Unlock()
		if err != nil {
			return
		}
	}
}

// answerQueries answers the colour and cursor queries the program sends at
// start (lipgloss asks for the background colour when bubbletea loads), as a
// real terminal does; unanswered, each waits out a 5 s timeout.
func (tm *terminal) answerQueries(out []byte) {
	if bytes.Contains(out, []byte("\x1b]11;?")) {
		_, _ = tm.pty.Write([]byte("\x1b]11;rgb:0000/0000/0000\x1b\\"))
	}
	if bytes.Contains(out, []byte("\x1b[6n")) {
		_, _ = tm.pty.Write([]byte("\x1b[1;1R"))
	}
}

// waitFor blocks until the output holds text (or the program ended, or 20 s
// passed: a timer wakes the waiter so a missing prompt fails, not hangs).
func (tm *terminal) waitFor(text string) {
	tm.t.Helper()
	tm.waitAfter(0, text, 20*time.Second)
}

// waitAfter is waitFor for text that appears after byte pos of the output,
// within d; it returns where the text ends, for the next wait. It looks at
// the new output only, so a long run's output is not searched again on
// every read.
func (tm *terminal) waitAfter(pos int, text string, d time.Duration) int {
	tm.t.Helper()
	expired := false
	timer := time.AfterFunc(d, func() { tm.mu.Lock(); expired = true; tm.cond.Broadcast(); tm.mu.Unlock() })
	defer timer.Stop()
	tm.mu.Lock()
	defer tm.mu.Unlock()
	from := max(pos, 0)
	for {
		out := tm.out.Bytes()
		if i := bytes.Index(out[from:], []byte(text)); i >= 0 {
			return from + i + len(text)
		}
		if tm.eof || expired {
			tm.t.Fatalf("the terminal never showed %q; at the end it showed:\n%s", text, out[max(len(out)-4000, pos-2000, 0):])
		}
		from = max(len(out)-len(text)+1, from)
		tm.cond.Wait()
	}
}

func (tm *terminal) send(keys string) {
	tm.t.Helper()
	if _, err := tm.pty.Write([]byte(keys)); err != nil {
		tm.t.Fatalf("type %q: %v", keys, err)
	}
}

// exit waits for the program and returns its exit status and everything it
// showed.
func (tm *terminal) exit() (int, string) {
	tm.t.Helper()
	done := make(chan error, 1)
	go func() { done <- tm.cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(60 * time.Second):
		tm.t.Fatalf("the program did not exit; it showed:\n%s", tm.output())
	}
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		tm.t.Fatalf("wait: %v", err)
	}
	// The reader gets EIO once the child has gone and its output is read.
	tm.mu.Lock()
	for !tm.eof {
		tm.cond.Wait()
	}
	tm.mu.Unlock()
	return code, tm.output()
}

func (tm *terminal) output() string {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	return tm.out.String()
}

// answer is what the person does at "proceed? [y/N]".
type answer struct {
	name string
	keys string
	yes  bool
}

var answers = []answer{
	{"yes", "y\r", true},
	{"no", "n\r", false},
	{"empty", "\r", false},
	{"EOF", "\x04", false}, // Ctrl-D at the start of a line
	{"CtrlC", "\x03", false},
}

// promptCase is one prompting command: how to set it up and what the
// queues must hold after a yes and after anything else.
type promptCase struct {
	name string
	// progress is the progress line's last state after a yes.
	progress string
	// run returns the command line; park is the parking lot (3 messages),
	// dest an empty queue bound for copies, dir a temp folder.
	args func(t *testing.T, park, dest, dir string) []string
	// after checks the queues (and files) once the program exited.
	after func(t *testing.T, park, dest, dir string, yes bool)
}

func depths(wantPark, wantDest int) func(t *testing.T, park, dest, dir string, yes bool) {
	return func(t *testing.T, park, dest, _ string, yes bool) {
		t.Helper()
		if yes {
			brokertest.WaitDepth(t, park, wantPark, 15*time.Second)
			brokertest.WaitDepth(t, dest, wantDest, 15*time.Second)
			return
		}
		brokertest.WaitDepth(t, park, 3, 15*time.Second)
		brokertest.WaitDepth(t, dest, 0, 15*time.Second)
	}
}

var promptCases = []promptCase{
	{
		name:     "replay",
		progress: "replayed 3/3",
		args: func(_ *testing.T, park, dest, _ string) []string {
			return []string{"replay", park, "--all", "--to", ":" + dest}
		},
		after: depths(0, 3),
	},
	{
		name:     "delete",
		progress: "deleted 3/3",
		args: func(_ *testing.T, park, _, _ string) []string {
			return []string{"delete", park, "--all"}
		},
		after: depths(0, 0),
	},
	{
		name:     "delete-id",
		progress: "deleted 1/1",
		args: func(_ *testing.T, park, _, _ string) []string {
			return []string{"delete", park, "--id", "m2"}
		},
		after: depths(2, 0),
	},
	{
		name:     "export-remove",
		progress: "exported and removed 3/3",
		args: func(_ *testing.T, park, _, dir string) []string {
			return []string{"export", park, "--remove", "--file", filepath.Join(dir, "out.jsonl")}
		},
		after: func(t *testing.T, park, dest, dir string, yes bool) {
			t.Helper()
			depths(0, 0)(t, park, dest, dir, yes)
			data, err := os.ReadFile(filepath.Join(dir, "out.jsonl"))
			switch {
			case yes && (err != nil || bytes.Count(data, []byte("\n")) != 3):
				t.Errorf("after yes the export should hold 3 lines: %v %q", err, data)
			case !yes && err == nil && len(data) > 0:
				t.Errorf("after no the export should be empty or absent, it holds %q", data)
			}
		},
	},
	{
		name:     "import",
		progress: "imported 3/3",
		args: func(t *testing.T, park, dest, dir string) []string {
			file := filepath.Join(dir, "export.jsonl")
			if r := clitest.NewCLI(t).Run("", "export", park, "--file", file); r.Code != 0 {
				t.Fatalf("export for import: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
			}
			return []string{"import", file, "--to", ":" + dest}
		},
		after: depths(3, 3), // import copies: the parking lot keeps its 3
	},
	{
		name:     "edit",
		progress: "replayed 1/1",
		args: func(t *testing.T, park, dest, _ string) []string {
			return []string{"edit", park, "m1", "--to", ":" + dest}
		},
		after: depths(2, 1),
	},
}

// TestPromptAnswersInATerminal drives every prompting command in a real
// pseudo-terminal against the broker: only "y" changes the queues; "n",
// an empty line, EOF and Ctrl-C leave them as they were and exit 2.
func TestPromptAnswersInATerminal(t *testing.T) {
	for _, pc := range promptCases {
		for _, a := range answers {
			t.Run(pc.name+"/"+a.name, func(t *testing.T) {
				t.Parallel()
				ch := brokertest.Channel(t)
				park := brokertest.Name(t, "parking-lot")
				dest := brokertest.Name(t, "dest")
				brokertest.DeclareQueue(t, ch, park, nil)
				brokertest.DeclareQueue(t, ch, dest, nil)
				for i := 1; i <= 3; i++ {
					brokertest.Publish(t, ch, "", park, amqp.Publishing{
						MessageId:   fmt.Sprintf("m%d", i),
						ContentType: "application/json",
						Body:        []byte(fmt.Sprintf(`{"n":%d}`, i)),
					})
				}
				brokertest.WaitDepth(t, park, 3, 10*time.Second)
				dir := t.TempDir()
				editor := filepath.Join(dir, "editor.sh")
				if err := os.WriteFile(editor, []byte("#!/bin/sh\nprintf '{\"n\":\"edited\"}' > \"$1\"\n"), 0o755); err != nil {
					t.Fatal(err)
				}
				env := []string{
					"XDG_CONFIG_HOME=" + dir, "HOME=" + dir,
					"VISUAL=" + editor, "EDITOR=" + editor,
				}
				tm := startTerminal(t, env, pc.args(t, park, dest, dir)...)
				tm.waitFor("proceed? [y/N]")
				tm.send(a.keys)
				code, out := tm.exit()
				pc.after(t, park, dest, dir, a.yes)
				switch {
				case a.yes && code != 0:
					t.Errorf("after yes: exit %d, want 0; the terminal showed:\n%s", code, out)
				case a.yes && !strings.Contains(out, "\r\x1b[K"+pc.progress):
					t.Errorf("after yes the progress line should reach %q; the terminal showed:\n%q", pc.progress, out)
				case !a.yes && code != 2:
					t.Errorf("after %s: exit %d, want 2; the terminal showed:\n%s", a.name, code, out)
				case !a.yes && !strings.Contains(out, "nothing changed"):
					t.Errorf("after %s the terminal should say nothing changed; it showed:\n%s", a.name, out)
				}
			})
		}
	}
}

// TestAYesActsOnTheCountItWasShown: messages parked while the prompt
// waits are not taken with the ones it showed (a lot fills during an
// incident): "y" to 3 replays, deletes or exports 3, the first, and the 2
// parked since stay.
func TestAYesActsOnTheCountItWasShown(t *testing.T) {
	for _, pc := range promptCases {
		switch pc.name {
		case "replay", "delete", "export-remove":
		default:
			continue
		}
		t.Run(pc.name, func(t *testing.T) {
			t.Parallel()
			ch := brokertest.Channel(t)
			park := brokertest.Name(t, "parking-lot")
			dest := brokertest.Name(t, "dest")
			brokertest.DeclareQueue(t, ch, park, nil)
			brokertest.DeclareQueue(t, ch, dest, nil)
			publish := func(from, to int) {
				for i := from; i <= to; i++ {
					brokertest.Publish(t, ch, "", park, amqp.Publishing{MessageId: fmt.Sprintf("m%d", i), Body: []byte(fmt.Sprintf(`{"n":%d}`, i))})
				}
				brokertest.WaitDepth(t, park, to, 10*time.Second)
			}
			publish(1, 3)
			dir := t.TempDir()
			tm := startTerminal(t, []string{"XDG_CONFIG_HOME=" + dir, "HOME=" + dir}, pc.args(t, park, dest, dir)...)
			tm.waitFor("proceed? [y/N]")
			publish(4, 5) // parked while the person reads
			tm.send("y\r")
			if code, out := tm.exit(); code != 0 {
				t.Fatalf("exit %d; the terminal showed:\n%s", code, out)
			}
			if got := messageIDs(brokertest.Drain(t, ch, park)); !slices.Equal(got, []string{"m4", "m5"}) {
				t.Errorf("%s after yes to 3: %v, want the 2 parked since", park, got)
			}
			if pc.name == "replay" {
				if got := messageIDs(brokertest.Drain(t, ch, dest)); !slices.Equal(got, []string{"m1", "m2", "m3"}) {
					t.Errorf("%s after yes to 3: %v, want m1–m3", dest, got)
				}
			}
		})
	}
}

// messageIDs are the deliveries' message ids, in order.
func messageIDs(ds []amqp.Delivery) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.MessageId
	}
	return out
}
