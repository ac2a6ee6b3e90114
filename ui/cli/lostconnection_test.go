//go:build integration

package cli_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker/brokertest"
	"github.com/parkinglot/parkinglot/ui/cli/clitest"
)

// TestAFaultMidPassLosesNothingFromALotFilledByTheDeliveryLimit: a parking
// lot filled as production fills it when nobody configured anything (a
// quorum work queue at the broker's defaults, its poison messages rejected
// until the broker parks them: on 4.3 they arrive carrying x-delivery-count
// 21 against the lot's own default limit of 20). Each command is stopped
// while it holds the lot: kill -9, a hang-up (SIGHUP, an SSH connection
// dropping), or its connection closed by the broker. Every message is still
// parked afterwards (a replay's: parked or at its destination; a
// delete's: parked or in the audit log as deleted; none lost). Before a pass made such messages safe on arrival, 4.3 lost
// almost the whole lot to any of these.
func TestAFaultMidPassLosesNothingFromALotFilledByTheDeliveryLimit(t *testing.T) {
	const n = 1000
	commands := faultCommands()
	faults := []string{"kill -9", "SIGHUP", "connection closed"}
	mgmt := brokertest.Management(t)
	for _, c := range commands {
		for _, fault := range faults {
			t.Run(c.name+"/"+fault, func(t *testing.T) {
				fc := startFaultCell(t, c, n, "parkinglot-fault", nil, 3*time.Minute)
				lot, sink, state, cmd, out, connName := fc.lot, fc.sink, fc.state, fc.cmd, fc.out, fc.connName
				stderr := fc.stderr
				drain := func() { go func() { _, _ = out.WriteTo(discard{}) }() }
				switch fault {
				case "kill -9":
					drain()
					_ = cmd.Process.Kill()
				case "SIGHUP":
					drain()
					_ = cmd.Process.Signal(syscall.SIGHUP)
				case "connection closed":
					// Its output is not read until the cut: a command whose
					// pipe is full is still holding the lot when the
					// management API (whose list lags) first shows its
					// connection, however fast it would have finished.
					brokertest.Eventually(t, 30*time.Second, 50*time.Millisecond,
						func() bool { return brokertest.CloseConnections(t, mgmt, connName) > 0 },
						func() string { return "no connection named " + connName + " to close" })
					drain()
					if c.name == "replay" || c.name == "watch scan" {
						// A replay or a watch re-dials and goes on; it is
						// stopped as a person would once the cut is seen.
						_ = cmd.Process.Signal(syscall.SIGTERM)
					}
				}
				err := cmd.Wait()
				var ee *exec.ExitError
				if fault == "SIGHUP" && errors.As(err, &ee) && !ee.Exited() {
					t.Errorf("a hang-up killed the command (%v); it must end as SIGTERM does. stderr: %s", err, stderr.String())
				}
				// Given back by now, or returned by the broker for the
				// lost connection: poll until the count holds still.
				// What a delete removed, it removed on purpose: each has an
				// audit entry, written before the removal.
				removed, where := faultRemoved(t, c, state)
				parked, sent := settledDepths(t, lot, sink, n, removed)
				t.Logf("%s, %s: %d parked + %d %s of %d", c.name, fault, parked, sent, where, n)
				if parked+sent < n {
					t.Fatalf("%s, %s: lost %d of %d (parked %d, %s %d); stderr: %s", c.name, fault, n-parked-sent, n, parked, where, sent, stderr.String())
				}
				brokertest.Figures(t, "fault mid-pass, lot filled by the delivery limit: %s / %s: lost 0 of %d (parked %d, %s %d, both %d)",
					c.name, fault, n, parked, where, sent, parked+sent-n)
			})
		}
	}
}

// faultCommand is a command of the fault matrix: how to start it on a
// lot, and when it holds the lot.
type faultCommand struct {
	name string
	args func(lot, sink string) []string
	// started: the command holds the lot now (awaited, not timed).
	started func(t *testing.T, out *bufio.Reader, lot, sink string)
}

// faultCommands are the commands of the fault matrix, each held (its
// output unread, or its replay rate-limited) once it made the lot safe.
func faultCommands() []faultCommand {
	firstLine := func(t *testing.T, out *bufio.Reader, _, _ string) {
		if _, err := out.ReadString('\n'); err != nil {
			t.Fatalf("no first line: %v", err)
		}
	}
	return []faultCommand{
		{"list", func(lot, _ string) []string { return []string{"-o", "json", "list", lot} }, firstLine},
		{"search", func(lot, _ string) []string { return []string{"-o", "json", "search", "--text", "poison", lot} }, firstLine},
		{"export", func(lot, _ string) []string { return []string{"export", lot} }, firstLine},
		// Its events, one a message deleted, fill the pipe: it holds the
		// rest of the lot, unread, until the fault.
		{"delete", func(lot, _ string) []string { return []string{"-o", "json", "delete", lot, "--all", "--yes"} }, firstLine},
		// The watch's scan: a browse pass every second. Its first makes
		// the lot safe as the others do before their first line; the
		// fault comes once a later one holds the lot (its consumer is on
		// the queue again).
		{"watch scan", func(lot, _ string) []string {
			return []string{"watch", lot, "--no-discover", "--interval", "1s", "--scan-interval", "1s", "--listen", "127.0.0.1:0"}
		}, func(t *testing.T, _ *bufio.Reader, lot, _ string) {
			ch := brokertest.Channel(t)
			for _, want := range []bool{true, false, true} {
				brokertest.Eventually(t, time.Minute, 2*time.Millisecond,
					func() bool {
						q, err := ch.QueueDeclarePassive(lot, true, false, false, false, nil)
						return err == nil && (q.Consumers > 0) == want
					},
					func() string { return fmt.Sprintf("the watch's scans of %s: consuming %v never seen", lot, want) })
			}
		}},
		{"replay", func(lot, sink string) []string {
			return []string{"replay", lot, "--all", "--to", ":" + sink, "--rate", "20", "--yes"}
		}, func(t *testing.T, _ *bufio.Reader, _, sink string) {
			brokertest.Eventually(t, time.Minute, 20*time.Millisecond,
				func() bool { return depthOf(t, sink) >= 3 },
				func() string { return "the replay sent nothing" })
		}},
	}
}

// faultCell is one cell of the fault matrix under way: a command holding a
// lot the delivery limit filled.
type faultCell struct {
	lot, sink, connName, state string
	cmd                        *exec.Cmd
	out                        *bufio.Reader // its stdout, unread but for what started read
	stderr                     *strings.Builder
}

// startFaultCell fills a lot of n by the delivery limit and a sink (declared
// with sinkArgs), starts c on them (its connections named namePrefix and a
// unique suffix, its state in a temp dir, its stdout a one-page pipe) and
// returns once c holds the lot.
func startFaultCell(t *testing.T, c faultCommand, n int, namePrefix string, sinkArgs amqp.Table, timeout time.Duration) *faultCell {
	t.Helper()
	fc := &faultCell{lot: brokertest.Name(t, "lot"), sink: brokertest.Name(t, "sink"), state: t.TempDir(), stderr: &strings.Builder{}}
	brokertest.DeclareQueue(t, brokertest.Channel(t), fc.sink, sinkArgs)
	brokertest.ParkByDeliveryLimit(t, fc.lot, n)
	fc.connName = namePrefix + " " + brokertest.Name(t, "")
	cl := clitest.NewCLI(t, "PARKINGLOT_CONNECTION_NAME="+fc.connName, "XDG_STATE_HOME="+fc.state)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	t.Cleanup(cancel)
	fc.cmd = cl.Command(ctx, c.args(fc.lot, fc.sink)...)
	stdout, err := fc.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	smallPipe(t, stdout)
	fc.cmd.Stderr = fc.stderr
	if err := fc.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	fc.out = bufio.NewReader(stdout)
	c.started(t, fc.out, fc.lot, fc.sink)
	return fc
}

// smallPipe shrinks the pipe r reads to one page, so that a command whose
// output is not read blocks at once, holding the lot, however few bytes a
// line of its output is on this broker version.
func smallPipe(t *testing.T, r io.Reader) {
	t.Helper()
	f, ok := r.(*os.File)
	if !ok {
		t.Fatalf("stdout pipe is a %T, not a file", r)
	}
	const setPipeSize = 1031 // F_SETPIPE_SZ (Linux)
	if _, _, errno := syscall.Syscall(syscall.SYS_FCNTL, f.Fd(), setPipeSize, 4096); errno != 0 {
		t.Fatalf("shrink the stdout pipe: %v", errno)
	}
}

// faultRemoved is how a fault cell counts what left the lot on purpose:
// a delete's audit entries (nil for the others: what reached the sink).
func faultRemoved(t *testing.T, c faultCommand, state string) (func() int, string) {
	if c.name != "delete" {
		return nil, "at the destination"
	}
	return func() int { return auditedOK(t, filepath.Join(state, "parkinglot", "audit.jsonl"), "delete") }, "deleted (audit log)"
}

// auditedOK counts the audit log's entries of action that say ok.
func auditedOK(t *testing.T, path, action string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var e struct{ Action, Result string }
		if l != "" && json.Unmarshal([]byte(l), &e) == nil && e.Action == action && e.Result == "ok" {
			n++
		}
	}
	return n
}

// settledDepths counts lot and sink until two counts a moment apart agree
// and account for the n messages (a broker applies the returns of a lost
// connection a moment later, and a busy 3.10 quorum queue answers a count
// with 0 while it is late: rabbit_quorum_queue:stat/1 on a timeout), or
// for a minute; the last counts are returned for the caller to judge.
// removed counts what left the lot on purpose (nil: what is at the sink).
func settledDepths(t *testing.T, lot, sink string, n int, removed func() int) (int, int) {
	t.Helper()
	last := [2]int{-1, -1}
	var now [2]int
	brokertest.Poll(time.Minute, 300*time.Millisecond, func() bool {
		now = [2]int{depthOf(t, lot), depthOf(t, sink)}
		if removed != nil {
			now[1] = removed()
		}
		same := now == last
		last = now
		return same && now[0]+now[1] >= n
	})
	return now[0], now[1]
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
