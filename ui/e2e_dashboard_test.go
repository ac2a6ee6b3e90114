//go:build integration

package ui

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker/brokertest"
	"github.com/parkinglot/parkinglot/ui/cli/clitest"
)

// TestTUIQueuesDashboard: in a real terminal against the real broker, the
// queues screen lists the parking lots first, the one whose oldest message
// waited longest first, each with its oldest age (from the message's
// x-parked-at), the last hour's arrivals ("-" for one filled by
// dead-lettering, which the broker does not count), its top error group
// and a sparkline of its depth since the screen opened; a quorum lot with
// the broker's default delivery limit (4.0+) is marked and, selected, says
// what lifts it; opening the parking lot shows every message, and nothing
// was taken.
func TestTUIQueuesDashboard(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Fatal("the end-to-end test needs tmux (make broker installs it): ", err)
	}
	// A vhost of its own: the screen scans every parking lot of its vhost.
	vurl, ch := brokertest.VhostChannel(t)
	lot, dl, source := brokertest.Name(t, "dlq"), brokertest.Name(t, "dl.dlq"), brokertest.Name(t, "source")
	for _, q := range []string{lot, dl} {
		if _, err := ch.QueueDeclare(q, true, false, false, false, nil); err != nil {
			t.Fatal(err)
		}
	}
	// A quorum parking lot at the broker's defaults: a delivery limit of
	// 20 from 4.0 (marked "!"), none on 3.x.
	qlot := brokertest.Name(t, "q.dlq")
	if _, err := ch.QueueDeclare(qlot, true, false, false, false, amqp.Table{"x-queue-type": "quorum"}); err != nil {
		t.Fatal(err)
	}
	limited := brokertest.Version(t).AtLeast(4, 0, 0)
	wantMark := map[bool]string{true: "P!", false: "P"}[limited]
	if _, err := ch.QueueDeclare(source, true, false, false, false, amqp.Table{
		"x-dead-letter-exchange": "", "x-dead-letter-routing-key": dl, "x-message-ttl": int32(1)}); err != nil {
		t.Fatal(err)
	}
	parked := time.Now().Add(-90*time.Minute - 10*time.Second).Truncate(time.Second)
	publish := func(i int, e string) {
		brokertest.Publish(t, ch, "", lot, amqp.Publishing{MessageId: fmt.Sprintf("m-%d", i), Body: []byte(`{}`),
			Headers: amqp.Table{"x-last-error": e, "x-parked-at": parked}})
	}
	for i, e := range []string{"ledger down 503", "ledger down 502", "bad amount -3"} {
		publish(i, e)
	}
	for i := range 2 {
		brokertest.Publish(t, ch, "", source, amqp.Publishing{MessageId: fmt.Sprintf("d-%d", i), Body: []byte(`{}`)})
	}
	home := t.TempDir()
	env := append(os.Environ(), "PARKINGLOT_URL="+vurl, "PARKINGLOT_MANAGEMENT_URL="+brokertest.ManagementURL(),
		"XDG_CONFIG_HOME="+home, "XDG_STATE_HOME="+home, "NO_COLOR=1")
	tm := newTmux(t, env, 160, 30, clitest.Binary(t)+" tui")
	tm.waitFor("the dashboard's columns", "NEW 1H")
	tm.waitFor("the error groups' count", "2 × ledger down <n>")

	row := func(screen, queue string) string {
		for _, l := range strings.Split(screen, "\n") {
			if f := strings.Fields(l); len(f) > 1 && f[1] == queue {
				return l
			}
		}
		return ""
	}
	// The statistics of the dead-lettered parking lot's depth and the
	// arrivals lag a few seconds behind the first read: wait for the row
	// that tells them (the screen reads the parking lots every 15 s).
	var screen string
	brokertest.Eventually(t, 45*time.Second, 200*time.Millisecond, func() bool {
		screen = tm.capture()
		l, d := strings.Fields(row(screen, lot)), strings.Fields(row(screen, dl))
		// P NAME MESSAGES OLDEST NEW-1H TREND TOP…
		q := strings.Fields(row(screen, qlot))
		// A depth that rose between two listings is marked ↑ for a minute.
		return len(l) > 5 && strings.TrimSuffix(l[2], "↑") == "3" && l[3] == "1h30m" && l[4] == "3" &&
			len(d) > 5 && strings.TrimSuffix(d[2], "↑") == "2" && d[4] == "-" && len(q) > 1 && strings.TrimPrefix(q[0], "▸") == wantMark
	}, func() string {
		return "the rows never said 3 messages, 1h30m, 3 arrivals for " + lot + ", 2 messages, - arrivals for " + dl + " and " + wantMark + " for " + qlot + ":\n" + screen
	})
	if strings.Index(screen, lot) > strings.Index(screen, dl) || strings.Index(screen, dl) > strings.Index(screen, source) {
		t.Errorf("order: %s (1h30m old), %s, then the other queues wanted:\n%s", lot, dl, screen)
	}

	// The trend: one more message, the sparkline rises and the depth is
	// marked ↑ (it rose in the last minute).
	publish(3, "ledger down 504")
	brokertest.Eventually(t, 30*time.Second, 200*time.Millisecond, func() bool {
		screen = tm.capture()
		l := strings.Fields(row(screen, lot))
		return len(l) > 5 && l[2] == "4↑" && strings.Contains(l[5], "▁") && strings.HasSuffix(l[5], "█")
	}, func() string { return "the depth's sparkline never rose to 4 (marked 4↑):\n" + screen })

	tm.keys("Home")
	tm.keys("Enter")
	tm.waitFor("the parking lot's messages", "4 messages")
	tm.waitFor("the browse to end", "all given back")
	tm.keys("Escape")
	// The next key waits for esc to be read: esc and a key read at once
	// are alt+key.
	tm.waitGone("the parking lot's list", "all given back")
	if limited {
		// The empty quorum lot is third: selected, the info line says its
		// limit and the command that lifts it.
		tm.keys("Down")
		tm.keys("Down")
		tm.waitFor("the quorum lot's delivery limit", "! delivery limit 20, a lost connection counts: parkinglot protect pltest.") // the name is cut
	}
	tm.keys("q")
	tm.waitFor("the exit", "EXITED:0")
	for q, want := range map[string]int{lot: 4, dl: 2} {
		waitDepth(t, ch, q, want, q+" (the messages it had)")
	}
}
