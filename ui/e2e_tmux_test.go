//go:build integration

package ui

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker/brokertest"
	"github.com/parkinglot/parkinglot/ui/cli/clitest"
)

// TestTUIEndToEnd drives the real binary in tmux against the real broker:
// seed a demo parking lot, open it, filter, open a message and read its
// headers, replay it through the confirm dialog, check with AMQP that it
// left the parking lot and reached its origin queue, fix another in
// $EDITOR and replay it, quit, and check that every other message is back
// in the parking lot (nothing held).
func TestTUIEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("needs tmux and RabbitMQ; run without -short")
	}
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Fatal("the end-to-end test needs tmux (make broker installs it): ", err)
	}
	ch := brokertest.Channel(t) // fails loudly without a broker
	brokertest.Management(t)
	bin := clitest.Binary(t)
	home := t.TempDir()
	suffix := make([]byte, 4)
	_, _ = rand.Read(suffix)
	name := "pltest-tui-" + hex.EncodeToString(suffix)
	lot, mainQueue := name+".error.dlq", name+".main.queue"
	// A user of its own with a random password: no screen may show it.
	user, password := name, "pw-"+hex.EncodeToString(suffix)+"-secret"
	brokertest.CreateUser(t, user, password, "management", true)
	env := append(os.Environ(),
		"PARKINGLOT_URL="+brokertest.URLFor(user, password, ""), "PARKINGLOT_MANAGEMENT_URL="+brokertest.ManagementURLFor(user, password),
		"XDG_CONFIG_HOME="+home, "XDG_STATE_HOME="+home, "NO_COLOR=1",
		"EDITOR=sed -i s/:-/:/", "VISUAL=") // the "editor" fixes the negative amount

	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("parkinglot %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		if strings.Contains(string(out), password) {
			t.Fatalf("parkinglot %s printed the password:\n%s", strings.Join(args, " "), out)
		}
		return string(out)
	}
	t.Cleanup(func() { run("demo", "--name", name, "--clean") })
	out := run("demo", "--name", name, "--no-tui")
	if !strings.Contains(out, "17 parked by this run") {
		t.Fatalf("demo did not fill the parking lot:\n%s", out)
	}
	if n := depth(t, ch, lot); n != 17 {
		t.Fatalf("parking lot holds %d, want 17", n)
	}

	tm := newTmux(t, env, 120, 40, bin+" tui "+lot)
	tm.secret = password
	tm.waitFor("the list", "17 messages")
	tm.waitFor("the browse to end", "all given back")

	tm.keys("/")
	tm.literal("amount must be positive")
	tm.keys("Enter")
	tm.waitFor("the filter", "4 of 17 messages")

	tm.keys("Enter")
	screen := tm.waitFor("the message", "x-retry-count")
	for _, want := range []string{"x-last-error", "amount must be positive, got", "x-failure-kind", "permanent", "Why it failed"} {
		if !strings.Contains(screen, want) {
			t.Fatalf("message screen lacks %q:\n%s", want, screen)
		}
	}
	id := regexp.MustCompile(`› (pay-\d+)`).FindStringSubmatch(screen)
	if id == nil {
		t.Fatalf("no message id in the title:\n%s", screen)
	}

	tm.keys("r")
	tm.waitFor("the plan", "reaches "+mainQueue)
	tm.keys("Enter")
	tm.waitFor("the replay", "replayed 1")
	screen = tm.waitFor("the reload", "3 of 16 messages")

	// The reload's pass gives its messages back as it ends; given-back
	// messages are ready again a moment after.
	waitDepth(t, ch, lot, 16, "after the replay the parking lot")
	got, ok, err := ch.Get(mainQueue, false)
	if err != nil || !ok {
		t.Fatalf("the replayed message is not in %s: ok=%v err=%v", mainQueue, ok, err)
	}
	if got.MessageId != id[1] || got.Headers["x-replay-count"] == nil {
		t.Fatalf("%s holds %s (headers %v), want the replayed %s", mainQueue, got.MessageId, got.Headers, id[1])
	}
	_ = got.Nack(false, true)

	// Fix the next one in $EDITOR and replay the edited body.
	cursor := regexp.MustCompile(`▸ (pay-\d+)`).FindStringSubmatch(screen)
	if cursor == nil {
		t.Fatalf("no cursor row:\n%s", screen)
	}
	tm.keys("e")
	tm.waitFor("the edit's plan", "Edit and replay")
	tm.waitFor("the edit's route", "reaches "+mainQueue)
	tm.keys("Enter")
	tm.waitFor("the edited replay", "replayed (edited) 1")
	tm.waitFor("the reload", "2 of 15 messages")
	waitDepth(t, ch, mainQueue, 2, mainQueue+" (the replayed and the edited message)")
	var edited *amqp.Delivery
	for i := 0; i < 2; i++ {
		d, ok, err := ch.Get(mainQueue, false)
		if err != nil || !ok {
			t.Fatalf("get from %s: ok=%v err=%v", mainQueue, ok, err)
		}
		if d.MessageId == cursor[1] {
			edited = &d
		}
	}
	if edited == nil || strings.Contains(string(edited.Body), ":-") {
		t.Fatalf("the edited %s did not arrive with the edited body: %+v", cursor[1], edited)
	}
	if err := ch.Nack(0, true, true); err != nil { // give both back
		t.Fatal(err)
	}

	tm.keys("q")
	tm.waitFor("the program to end", "EXITED:0")
	waitDepth(t, ch, lot, 15, "after quitting the parking lot (17 less the two replayed; fewer: the TUI kept messages)")
}

// depth is a queue's ready count, from the broker itself.
func depth(t *testing.T, ch *amqp.Channel, queue string) int {
	t.Helper()
	q, err := ch.QueueDeclarePassive(queue, false, false, false, false, nil)
	if err != nil {
		t.Fatalf("queue %s: %v", queue, err)
	}
	return q.Messages
}

// waitDepth waits until queue holds want ready messages (10 s at most):
// messages given back are ready again a moment after the nack.
func waitDepth(t *testing.T, ch *amqp.Channel, queue string, want int, what string) {
	t.Helper()
	var n int
	brokertest.Eventually(t, 10*time.Second, 20*time.Millisecond, func() bool {
		n = depth(t, ch, queue)
		return n == want
	}, func() string { return fmt.Sprintf("%s holds %d ready, want %d", what, n, want) })
}

// tmuxSession is one program in a detached tmux session on a private
// server socket, so the test never touches the user's tmux.
type tmuxSession struct {
	t      *testing.T
	socket string
	secret string // fails the test if any captured screen shows it
}

func newTmux(t *testing.T, env []string, w, h int, command string) *tmuxSession {
	t.Helper()
	s := &tmuxSession{t: t, socket: fmt.Sprintf("pltest-%d", time.Now().UnixNano())}
	// The shell line reports the exit status and keeps the pane open to
	// read it.
	line := command + `; echo "EXITED:$?"; sleep 600`
	cmd := exec.Command("tmux", "-L", s.socket, "-f", "/dev/null", "new-session", "-d", "-s", "tui",
		"-x", fmt.Sprint(w), "-y", fmt.Sprint(h), line)
	cmd.Env = env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("tmux new-session: %v\n%s", err, out)
	}
	t.Cleanup(func() {
		// A failure that checked the queues, not the screen, still shows
		// what the person saw.
		if t.Failed() {
			if out, err := exec.Command("tmux", "-L", s.socket, "capture-pane", "-p", "-t", "tui").CombinedOutput(); err == nil {
				t.Logf("the screen at the end:\n%s", out)
			}
		}
		_ = exec.Command("tmux", "-L", s.socket, "kill-server").Run()
	})
	return s
}

func (s *tmuxSession) tmux(args ...string) string {
	s.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-L", s.socket}, args...)...).CombinedOutput()
	if err != nil {
		s.t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func (s *tmuxSession) keys(keys ...string) {
	s.t.Helper()
	s.tmux(append([]string{"send-keys", "-t", "tui"}, keys...)...)
}

func (s *tmuxSession) literal(text string) {
	s.t.Helper()
	s.tmux("send-keys", "-t", "tui", "-l", text)
}

func (s *tmuxSession) capture() string {
	s.t.Helper()
	screen := s.tmux("capture-pane", "-p", "-t", "tui")
	if s.secret != "" && strings.Contains(screen, s.secret) {
		s.t.Fatalf("the screen shows the password:\n%s", screen)
	}
	return screen
}

// waitGone polls the screen until it no longer shows text (20s at most).
func (s *tmuxSession) waitGone(what, text string) {
	s.t.Helper()
	var screen string
	brokertest.Eventually(s.t, 20*time.Second, 50*time.Millisecond, func() bool {
		screen = s.capture()
		return !strings.Contains(screen, text)
	}, func() string { return fmt.Sprintf("%s (%q) still on screen:\n%s", what, text, screen) })
}

// waitFor polls the screen until it shows text (20s at most) and returns it.
func (s *tmuxSession) waitFor(what, text string) string {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		screen := s.capture()
		if strings.Contains(screen, text) {
			return screen
		}
		select {
		case <-ctx.Done():
			s.t.Fatalf("waiting for %s (%q): the screen shows:\n%s", what, text, screen)
		case <-tick.C:
		}
	}
}
