//go:build integration

package ui

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/parkinglot/parkinglot/broker/brokertest"
	"github.com/parkinglot/parkinglot/ui/cli/clitest"
)

// TestTUIFaultWhileItReadsLosesNothing is the TUI's column of the fault
// matrix (README, Guarantees): the real binary in tmux lists a parking
// lot the delivery limit filled (on 4.3 every message arrives one lost
// connection from its limit; the first load makes them safe), then reloads
// it, and while the reload's pass holds the lot the TUI is killed with
// kill -9, or its terminal hangs up (the tmux server gone: SIGHUP, as an
// SSH connection dropping). The lot keeps every message.
func TestTUIFaultWhileItReadsLosesNothing(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Fatal("the end-to-end test needs tmux (make broker installs it): ", err)
	}
	const n = 1000
	for _, fault := range []string{"kill -9", "SIGHUP"} {
		t.Run(fault, func(t *testing.T) {
			lot := brokertest.Name(t, "lot")
			parked := brokertest.ParkByDeliveryLimit(t, lot, n)
			home := t.TempDir()
			env := append(os.Environ(), "PARKINGLOT_URL="+brokertest.URL(), "PARKINGLOT_MANAGEMENT_URL="+brokertest.ManagementURL(),
				"XDG_CONFIG_HOME="+home, "XDG_STATE_HOME="+home, "NO_COLOR=1")
			tm := newTmux(t, env, 140, 30, clitest.Binary(t)+" tui "+lot)
			tm.waitFor("the list", fmt.Sprintf("%d messages", n))
			tm.waitFor("the first load to end", "all given back")
			pid := tuiPid(t, tm)

			ch := brokertest.Channel(t)
			held := func() bool {
				q, err := ch.QueueDeclarePassive(lot, true, false, false, false, nil)
				return err == nil && q.Consumers > 0
			}
			tm.keys("C-r")
			brokertest.Eventually(t, 30*time.Second, time.Millisecond, held,
				func() string { return "the reload never consumed the lot" })
			switch fault {
			case "kill -9":
				if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
					t.Fatal(err)
				}
			case "SIGHUP":
				_ = exec.Command("tmux", "-L", tm.socket, "kill-server").Run()
			}
			brokertest.Eventually(t, 30*time.Second, 20*time.Millisecond,
				func() bool { return syscall.Kill(pid, 0) != nil },
				func() string { return fmt.Sprintf("the TUI (pid %d) still runs after %s", pid, fault) })
			brokertest.Eventually(t, 30*time.Second, 20*time.Millisecond, func() bool { return !held() },
				func() string { return "the lot still has a consumer after the TUI ended" })

			ids := map[string]int{}
			for _, d := range brokertest.Drain(t, ch, lot) {
				ids[d.MessageId]++
			}
			lost, dups := 0, 0
			for _, id := range parked.IDs {
				switch c := ids[id]; {
				case c == 0:
					lost++
				case c > 1:
					dups += c - 1
				}
			}
			brokertest.Figures(t, "fault mid-pass, lot filled by the delivery limit: TUI reload / %s: lost %d of %d (duplicates %d)", fault, lost, n, dups)
			if lost != 0 {
				t.Fatalf("%s during the TUI's reload: lost %d of %d", fault, lost, n)
			}
		})
	}
}

// tuiPid is the pid of the binary the tmux session's shell runs.
func tuiPid(t *testing.T, tm *tmuxSession) int {
	t.Helper()
	shell := strings.TrimSpace(tm.tmux("list-panes", "-t", "tui", "-F", "#{pane_pid}"))
	out, err := exec.Command("pgrep", "-P", shell).Output()
	if err != nil {
		t.Fatalf("pgrep -P %s: %v", shell, err)
	}
	pid, err := strconv.Atoi(strings.Fields(string(out))[0])
	if err != nil {
		t.Fatalf("pid of the TUI: %v (%q)", err, out)
	}
	return pid
}
