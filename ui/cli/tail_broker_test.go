//go:build integration

package cli_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/broker/brokertest"
	"github.com/parkinglot/parkinglot/ui/cli/clitest"
)

// TestTailSeesArrivalsWithoutTouchingTheLot: `tail` prints each message a
// consumer's rejects dead-letter into a parking lot (through its
// dead-letter exchange) within a second, and says which lot it cannot
// tap (fed only by the default exchange); the lot keeps every message,
// none delivered; Ctrl-C ends it with the count by error group, and a
// tail killed with kill -9 leaves no tap queue behind.
func TestTailSeesArrivalsWithoutTouchingTheLot(t *testing.T) {
	ch := brokertest.Channel(t)
	dlx, lot, work := brokertest.DLXLot(t, ch)
	byName := brokertest.Name(t, "byname.lot") // fed by the default exchange alone
	brokertest.DeclareQueue(t, ch, byName, nil)
	c := clitest.NewCLI(t)

	start := func() (*tailRun, func()) {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		cmd := c.Command(ctx, "tail", lot, byName, "-o", "json")
		stdout, _ := cmd.StdoutPipe()
		stderr, _ := cmd.StderrPipe()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		r := &tailRun{cmd: cmd, lines: lines(stdout), errs: lines(stderr)}
		setup := r.until(t, r.errs, byName+": not tailed: only the default exchange routes to it")
		if !strings.Contains(setup, "tailing "+lot+": a copy of what "+dlx+" routes to it") {
			t.Errorf("the tail did not say how it taps %s:\n%s", lot, setup)
		}
		return r, cancel
	}
	park := func(id, errText string) time.Time {
		brokertest.Publish(t, ch, "", work, amqp.Publishing{MessageId: id, Body: []byte(`{}`), Headers: amqp.Table{"x-last-error": errText}})
		d := brokertest.MustGet(t, ch, work)
		at := time.Now()
		if err := d.Reject(false); err != nil {
			t.Fatal(err)
		}
		return at
	}

	r, cancel := start()
	defer cancel()
	for i, id := range []string{"m-1", "m-2", "m-3"} {
		errText := "ledger down"
		if i == 2 {
			errText = "tls handshake failed"
		}
		at := park(id, errText)
		line := r.next(t)
		if seen := time.Since(at); seen > time.Second {
			t.Errorf("%s seen %v after it was parked, want within 1 s", id, seen)
		}
		var got struct {
			Queue   string `json:"queue"`
			Summary struct {
				ID string `json:"id"`
			} `json:"summary"`
		}
		if err := json.Unmarshal([]byte(line), &got); err != nil || got.Queue != lot || got.Summary.ID != id {
			t.Errorf("arrival %d: %s (%v), want %s in %s", i, line, err, id, lot)
		}
	}
	brokertest.WaitDepth(t, lot, 3, 15*time.Second)
	// Nothing consumes the lot itself.
	if q, err := brokertest.Management(t).Queue(context.Background(), lot); err != nil || q.Consumers != 0 || q.MessagesUnacknowledged != 0 {
		t.Errorf("while the tail runs the lot has %d consumer(s), %d unacked (%v), want none", q.Consumers, q.MessagesUnacknowledged, err)
	}
	_ = r.cmd.Process.Signal(syscall.SIGINT)
	if err := r.cmd.Wait(); err != nil {
		t.Errorf("tail ended by Ctrl-C: %v, want exit 0", err)
	}
	summary := r.rest()
	for _, want := range []string{"3 arrived", "2 × ledger down", "1 × tls handshake failed"} {
		if !strings.Contains(summary, want) {
			t.Errorf("the summary lacks %q:\n%s", want, summary)
		}
	}
	// The lot holds all three, in the order they were parked.
	for _, id := range []string{"m-1", "m-2", "m-3"} {
		if d := brokertest.MustGet(t, ch, lot); d.MessageId != id {
			t.Errorf("the lot gave %s where %s was parked", d.MessageId, id)
		}
	}
	if err := ch.Nack(0, true, true); err != nil {
		t.Fatal(err)
	}

	// kill -9: the tap goes with the connection.
	r, cancel2 := start()
	defer cancel2()
	if taps := tapQueues(t, lot); len(taps) == 0 {
		t.Fatal("no tap queue while the tail runs")
	}
	_ = r.cmd.Process.Signal(syscall.SIGKILL)
	_ = r.cmd.Wait()
	brokertest.Eventually(t, 15*time.Second, 100*time.Millisecond, func() bool { return len(tapQueues(t, lot)) == 0 },
		func() string { return "tap queues left after kill -9: " + strings.Join(tapQueues(t, lot), ", ") })
	brokertest.WaitDepth(t, lot, 3, 15*time.Second)
}

// tapQueues are the tap queues of lot the broker holds.
func tapQueues(t *testing.T, lot string) []string {
	t.Helper()
	qs, err := brokertest.Management(t).Queues(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, q := range qs {
		if strings.HasPrefix(q.Name, broker.TapPrefix) && strings.Contains(q.Name, lot) {
			out = append(out, q.Name)
		}
	}
	return out
}

// tailRun is a running tail: its stdout and stderr lines as they come.
type tailRun struct {
	cmd   *exec.Cmd
	lines <-chan string
	errs  <-chan string
	seen  []string // stderr lines read by until
}

func lines(r io.Reader) <-chan string {
	out := make(chan string, 100)
	go func() {
		defer close(out)
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			out <- sc.Text()
		}
	}()
	return out
}

// until reads from c until a line holds want, and returns what it read.
func (r *tailRun) until(t *testing.T, c <-chan string, want string) string {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		select {
		case l, ok := <-c:
			if !ok {
				t.Fatalf("the tail ended before %q:\n%s", want, strings.Join(r.seen, "\n"))
			}
			r.seen = append(r.seen, l)
			if strings.Contains(l, want) {
				return strings.Join(r.seen, "\n")
			}
		case <-deadline:
			t.Fatalf("no %q in 30 s:\n%s", want, strings.Join(r.seen, "\n"))
		}
	}
}

// next is the next stdout line (10 s at most).
func (r *tailRun) next(t *testing.T) string {
	t.Helper()
	select {
	case l, ok := <-r.lines:
		if !ok {
			t.Fatal("the tail's output ended")
		}
		return l
	case <-time.After(10 * time.Second):
		t.Fatal("no arrival printed in 10 s")
	}
	return ""
}

// rest is every stderr line after those until read, once the tail ended.
func (r *tailRun) rest() string {
	var b strings.Builder
	for l := range r.errs {
		b.WriteString(l + "\n")
	}
	return b.String()
}

// TestReplayFollowTellsWhatCameBack: `replay --follow D` tails the lot from
// the replay's start until D after its end, and tells the replayed
// messages that failed again (rejected by the consumer back into the lot)
// from a failure that is new.
func TestReplayFollowTellsWhatCameBack(t *testing.T) {
	ch := brokertest.Channel(t)
	_, lot, work := brokertest.DLXLot(t, ch)
	reject := func() string { // the consumer of work fails
		d := brokertest.MustGet(t, ch, work)
		if err := d.Reject(false); err != nil {
			t.Fatal(err)
		}
		return d.MessageId
	}
	for _, id := range []string{"m-1", "m-2"} {
		brokertest.Publish(t, ch, "", work, amqp.Publishing{MessageId: id, Body: []byte(`{}`), Headers: amqp.Table{"x-last-error": "ledger down"}})
		reject()
	}
	brokertest.WaitDepth(t, lot, 2, 15*time.Second)

	c := clitest.NewCLI(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := c.Command(ctx, "replay", lot, "--all", "--to", ":"+work, "--yes", "--follow", "4s", "-o", "json")
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The replayed copies fail again; a new message fails too.
	reject()
	reject()
	brokertest.Publish(t, ch, "", work, amqp.Publishing{MessageId: "m-3", Body: []byte(`{}`), Headers: amqp.Table{"x-last-error": "tls handshake failed"}})
	reject()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("replay --follow: %v\n%s%s", err, stdout.String(), stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	var f struct {
		CameBack int            `json:"came_back"`
		BackBy   map[string]int `json:"came_back_by_group"`
		New      int            `json:"new"`
		NewBy    map[string]int `json:"new_by_group"`
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &f); err != nil || f.CameBack != 2 || f.New != 1 || f.BackBy["ledger down"] != 2 || f.NewBy["tls handshake failed"] != 1 {
		t.Errorf("followed %+v (%v), want 2 came back (ledger down) and 1 new (tls handshake failed):\n%s%s", f, err, stdout.String(), stderr.String())
	}
	brokertest.WaitDepth(t, lot, 3, 15*time.Second)
}
