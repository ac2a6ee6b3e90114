//go:build integration

package cli_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker/brokertest"
)

// TestCtrlCReplayInATerminal: a replay of 2,000 messages at --rate 200 in
// a real terminal, interrupted by Ctrl-C once its progress line passed
// 400 (about 2 s), on a classic and a quorum parking lot, prints one summary — replayed N, M still parked, nothing lost — and
// no line per message not done, and exits 130; the parking lot holds M and
// N + M is 2,000. So does a replay of 20 at --rate 4 interrupted after 4:
// its whole selection was read before the interruption (the run's own
// error is nil then, only its messages not sent say it stopped). The
// progress counts toward the whole selection, and the audit log holds one
// entry for each message replayed, none for those never sent.
func TestCtrlCReplayInATerminal(t *testing.T) {
	for _, qt := range []string{"classic", "quorum"} {
		t.Run(qt, func(t *testing.T) { ctrlCReplay(t, amqp.Table{"x-queue-type": qt}, 2000, 200, 400) })
	}
	t.Run("small", func(t *testing.T) { ctrlCReplay(t, amqp.Table{"x-queue-type": "classic"}, 20, 4, 4) })
}

func ctrlCReplay(t *testing.T, args amqp.Table, total, rate, after int) {
	ch := brokertest.Channel(t)
	park := brokertest.Name(t, "parking-lot")
	dest := brokertest.Name(t, "dest")
	brokertest.DeclareQueue(t, ch, park, args)
	brokertest.DeclareQueue(t, ch, dest, args)
	msgs := make([]amqp.Publishing, total)
	for i := range msgs {
		msgs[i] = amqp.Publishing{MessageId: fmt.Sprintf("m%04d", i), Body: []byte(fmt.Sprintf(`{"n":%d}`, i)), ContentType: "application/json"}
	}
	brokertest.PublishMany(t, ch, "", park, msgs)
	brokertest.WaitDepth(t, park, total, 30*time.Second)

	dir := t.TempDir()
	tm := startTerminal(t, []string{"XDG_CONFIG_HOME=" + dir, "XDG_STATE_HOME=" + dir, "HOME=" + dir}, "replay", park, "--all", "--to", ":"+dest, "--rate", strconv.Itoa(rate), "--yes")
	progress := regexp.MustCompile(`replayed (\d+)/(\d+)`)
	shown := func() int {
		m := progress.FindAllStringSubmatch(tm.output(), -1)
		if len(m) == 0 {
			return 0
		}
		n, _ := strconv.Atoi(m[len(m)-1][1])
		return n
	}
	brokertest.Eventually(t, 30*time.Second, 20*time.Millisecond, func() bool { return shown() >= after },
		func() string {
			return fmt.Sprintf("the progress line never passed %d (~1-2 s): %s", after, tm.output())
		})
	tm.send("\x03") // Ctrl-C: SIGINT through the terminal
	code, out := tm.exit()
	if code != 130 {
		t.Errorf("exit %d, want 130; the terminal showed:\n%q", code, out)
	}
	sum := regexp.MustCompile(`interrupted: replayed (\d+) message\(s\), (\d+) still parked in ` + regexp.QuoteMeta(park) + `; nothing lost\r?\n`).FindStringSubmatch(out)
	if sum == nil {
		t.Fatalf("no summary line; the terminal showed:\n%q", out)
	}
	done, parked := atoi(t, sum[1]), atoi(t, sum[2])
	for _, bad := range []string{"not done", "context canceled", "parkinglot:"} {
		if strings.Contains(out, bad) {
			t.Errorf("the terminal shows %q:\n%q", bad, out)
		}
	}
	if strings.Count(out, "interrupted") != 1 {
		t.Errorf("more than one summary:\n%q", out)
	}
	if done < after || done+parked != total || parked == 0 {
		t.Errorf("replayed %d + still parked %d, want %d (at least %d replayed, some still parked)", done, parked, total, after)
	}
	// The progress counts toward the selection, not the read-ahead.
	for _, m := range progress.FindAllStringSubmatch(out, -1) {
		if atoi(t, m[2]) != total {
			t.Errorf("progress %s/%s: want out of the %d selected", m[1], m[2], total)
			break
		}
	}
	// The audit log holds what was done, nothing of what was not sent.
	audit, err := os.ReadFile(filepath.Join(dir, "parkinglot", "audit.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(audit)), "\n")
	for _, l := range lines {
		if !strings.Contains(l, `"result":"ok"`) {
			t.Errorf("audit entry %s: want only what was done", l)
			break
		}
	}
	if len(lines) != done {
		t.Errorf("%d audit entries, want the %d replayed", len(lines), done)
	}
	if got := brokertest.Depth(t, ch, park); got != parked {
		t.Errorf("the parking lot holds %d, the summary said %d still parked", got, parked)
	}
	if got := brokertest.Depth(t, ch, dest); got < done {
		t.Errorf("the destination holds %d, fewer than the %d replayed", got, done)
	}
	brokertest.Figures(t, "ctrl-c replay %v: replayed=%d still_parked=%d exit=%d", args["x-queue-type"], done, parked, code)
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
