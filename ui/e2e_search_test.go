//go:build integration

package ui

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker/brokertest"
	"github.com/parkinglot/parkinglot/ui/cli/clitest"
)

// TestTUISearchAcrossLots: in a real terminal against the real
// broker, / on the queues screen searches a classic and a quorum parking
// lot for a text, lists the planted matches (and not the one in a queue
// that is no parking lot), opens one in its queue, and esc walks back to
// the results and the queues; every queue still holds all its messages.
//
// The test's name says "Lots", not "ParkingLots": its queues are named
// after it, and a name with "parking" in it marks a parking lot.
func TestTUISearchAcrossLots(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Fatal("the end-to-end test needs tmux (make broker installs it): ", err)
	}
	// A vhost of its own: the search reads every parking lot of its vhost.
	vurl, ch := brokertest.VhostChannel(t)
	classic, quorum, work := brokertest.Name(t, "a.dlq"), brokertest.Name(t, "b.dlq"), brokertest.Name(t, "work")
	for q, args := range map[string]amqp.Table{classic: nil, quorum: {"x-queue-type": "quorum"}, work: nil} {
		if _, err := ch.QueueDeclare(q, true, false, false, false, args); err != nil {
			t.Fatal(err)
		}
	}
	publish := func(queue, id, errText, body string) {
		brokertest.Publish(t, ch, "", queue, amqp.Publishing{MessageId: id, Body: []byte(body), ContentType: "application/json",
			Headers: amqp.Table{"x-last-error": errText}})
	}
	publish(classic, "a-1", "bad amount -3", `{"ref":"order-1"}`)
	publish(classic, "find-a", "ledger down 503", `{"ref":"order-4711"}`)
	publish(classic, "a-3", "ledger down 502", `{"ref":"order-2"}`)
	publish(quorum, "b-1", "bad amount -1", `{"ref":"order-3"}`)
	publish(quorum, "find-b", "ledger rejected ORDER-4711", `{"ref":"order-4"}`)
	publish(work, "find-w", "not parked", `{"ref":"order-4711"}`)
	want := map[string]int{classic: 3, quorum: 2, work: 1}
	for q, n := range want {
		waitDepth(t, ch, q, n, q)
	}

	home := t.TempDir()
	env := append(os.Environ(), "PARKINGLOT_URL="+vurl, "PARKINGLOT_MANAGEMENT_URL="+brokertest.ManagementURL(),
		"XDG_CONFIG_HOME="+home, "XDG_STATE_HOME="+home, "NO_COLOR=1")
	tm := newTmux(t, env, 160, 30, clitest.Binary(t)+" tui")
	tm.waitFor("the queues", "2 parking lot(s) (P)")

	tm.keys("/")
	tm.waitFor("the search prompt", "search every parking lot:")
	tm.literal("order-4711")
	tm.keys("Enter")
	screen := tm.waitFor("the search to end", "2 matches in 2 of 2 parking lot(s), 5 messages looked at, all given back")
	for _, s := range []string{`text "order-4711" in ids, errors and bodies`, "find-a", "ledger down 503", "find-b", "ledger rejected ORDER-4711"} {
		if !strings.Contains(screen, s) {
			t.Errorf("the results lack %q:\n%s", s, screen)
		}
	}
	if strings.Contains(screen, "find-w") {
		t.Errorf("a queue that is no parking lot was searched:\n%s", screen)
	}

	// Open the quorum parking lot's match; the order of the parking lots
	// is the engine's.
	if strings.Index(screen, "find-b") > strings.Index(screen, "find-a") {
		tm.keys("Down")
	}
	tm.keys("Enter")
	screen = tm.waitFor("the message opened", "x-last-error")
	// The title ends with the message; the status bar names its queue.
	if title := strings.SplitN(screen, "\n", 2)[0]; !strings.HasSuffix(strings.TrimSpace(title), "› find-b") || !strings.Contains(screen, quorum+": ") {
		t.Fatalf("not message find-b in %s:\n%s", quorum, screen)
	}
	if !strings.Contains(screen, "ledger rejected ORDER-4711") {
		t.Fatalf("the message screen does not show its error:\n%s", screen)
	}
	tm.keys("Escape")
	tm.waitFor("its queue's list", "all given back, nothing held")
	tm.keys("Escape")
	tm.waitFor("the results again", "2 matches in 2 of 2 parking lot(s)")
	tm.keys("Escape")
	tm.waitFor("the queues again", "2 parking lot(s) (P)")
	tm.keys("q")
	tm.waitFor("the exit", "EXITED:0")
	for q, n := range want {
		waitDepth(t, ch, q, n, q+" (the messages it had)")
	}
}
