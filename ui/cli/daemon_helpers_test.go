//go:build integration

package cli_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/parkinglot/parkinglot/broker/brokertest"
	"github.com/parkinglot/parkinglot/retrycore"
)

// Helpers of the daemon tests, as retrycore's own tests have them.

// testPipeline is a pipeline with names unique to the test, all of which
// are deleted when the test ends.
func testPipeline(t *testing.T, queueType string, delays ...time.Duration) retrycore.Pipeline {
	t.Helper()
	name := brokertest.Name(t, "")
	p := retrycore.Pipeline{
		Name:           name,
		QueueType:      queueType,
		Main:           retrycore.MainPath{Exchange: name + ".main", Queue: name + ".main.queue", RoutingKey: "work"},
		Retry:          retrycore.RetryPath{Exchange: name + ".retry", RoutingKey: "retry"},
		Error:          retrycore.ErrorPath{Exchange: name + ".error", Queue: name + ".dlq", RoutingKey: "error"},
		MaxRetries:     3,
		Prefetch:       10,
		Concurrency:    2,
		HandlerTimeout: retrycore.NewDelay(10 * time.Second),
	}
	for _, d := range delays {
		p.Retry.Delays = append(p.Retry.Delays, retrycore.NewDelay(d))
	}
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, q := range append([]string{p.Main.Queue, p.Error.Queue}, tierQueues(p)...) {
		brokertest.DeleteQueueAtEnd(t, q)
	}
	for _, ex := range []string{p.Main.Exchange, p.Retry.Exchange, p.Error.Exchange} {
		brokertest.DeleteExchangeAtEnd(t, ex)
	}
	return p
}

func tierQueues(p retrycore.Pipeline) []string {
	var qs []string
	for _, tier := range p.Tiers() {
		qs = append(qs, tier.Queue)
	}
	return qs
}

// handlerScript is a test handler under testdata/handlers, by absolute path.
func handlerScript(t *testing.T, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("..", "..", "testdata", "handlers", name))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatal(err)
	}
	return p
}

// writePipelineFile writes p as pipeline.yaml for the binary.
func writePipelineFile(t *testing.T, p retrycore.Pipeline) string {
	t.Helper()
	var delays []string
	for _, d := range p.Retry.Delays {
		delays = append(delays, d.Text)
	}
	yaml := fmt.Sprintf(`# written by %s
name: %s
queue_type: %s
main: {exchange: %s, queue: %s, routing_key: %s}
retry: {exchange: %s, routing_key: %s, delays: [%s]}
error: {exchange: %s, queue: %s, routing_key: %s}
max_retries: %d
prefetch: %d
concurrency: %d
handler_timeout: %s
`, t.Name(), p.Name, p.QueueType, p.Main.Exchange, p.Main.Queue, p.Main.RoutingKey, p.Retry.Exchange, p.Retry.RoutingKey,
		strings.Join(delays, ", "), p.Error.Exchange, p.Error.Queue, p.Error.RoutingKey, p.MaxRetries, p.Prefetch, p.Concurrency, p.HandlerTimeout.Text)
	file := filepath.Join(t.TempDir(), "pipeline.yaml")
	if err := os.WriteFile(file, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := retrycore.LoadPipeline(file); err != nil {
		t.Fatalf("the test's own pipeline file: %v", err)
	}
	return file
}

// startDaemon starts the binary with args; the test kills it at the end
// if it still runs, and shows its log if the test failed.
func startDaemon(t *testing.T, c *cli, args ...string) *daemonProc {
	t.Helper()
	d := &daemonProc{cmd: c.command(args...), log: newProcLog(), done: make(chan struct{})}
	d.cmd.Stdout, d.cmd.Stderr = d.log, d.log
	// Handlers orphaned by a kill -9 hold the log pipe until they exit.
	d.cmd.WaitDelay = 10 * time.Second
	if err := d.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		d.err = d.cmd.Wait()
		close(d.done)
	}()
	t.Cleanup(func() {
		_ = d.cmd.Process.Kill()
		select {
		case <-d.done:
		case <-time.After(30 * time.Second):
			t.Errorf("daemon pid %d not reaped", d.cmd.Process.Pid)
		}
		if t.Failed() {
			t.Logf("daemon pid %d log (last lines):\n%s", d.cmd.Process.Pid, d.log.tail(40))
		}
	})
	return d
}

// daemonProc is one `parkinglot daemon` process of the binary.
type daemonProc struct {
	cmd  *exec.Cmd
	log  *procLog
	done chan struct{} // closed when the process was waited for
	err  error         // Wait's result, after done
}

// waitConsuming waits for a "consuming" log line at or after line index
// from, failing the test if the daemon exits first or timeout passes.
func (d *daemonProc) waitConsuming(t *testing.T, from int, timeout time.Duration) {
	t.Helper()
	if _, err := d.log.wait("msg=consuming", from, timeout, d.done); err != nil {
		t.Fatalf("daemon pid %d: %v\n%s", d.cmd.Process.Pid, err, d.log.tail(20))
	}
}

// waitLine waits for a log line containing s at or after line index from.
func (d *daemonProc) waitLine(t *testing.T, s string, from int, timeout time.Duration) {
	t.Helper()
	if _, err := d.log.wait(s, from, timeout, d.done); err != nil {
		t.Fatalf("daemon pid %d: %v\n%s", d.cmd.Process.Pid, err, d.log.tail(20))
	}
}

// kill9 sends SIGKILL and waits for the process to be gone.
func (d *daemonProc) kill9(t *testing.T) {
	t.Helper()
	if err := d.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatalf("kill -9: %v", err)
	}
	select {
	case <-d.done:
	case <-time.After(30 * time.Second):
		t.Fatal("the daemon did not die after SIGKILL")
	}
}

// stop sends SIGTERM and requires a clean exit (status 0).
func (d *daemonProc) stop(t *testing.T) {
	t.Helper()
	if err := d.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatalf("SIGTERM: %v", err)
	}
	select {
	case <-d.done:
		if d.err != nil {
			t.Fatalf("daemon exit after SIGTERM: %v, want status 0\n%s", d.err, d.log.tail(20))
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the daemon did not exit within 60s of SIGTERM")
	}
}

// procLog collects a process's output lines and lets a test wait for one.
type procLog struct {
	mu      sync.Mutex
	lines   []string
	partial []byte
	notify  chan struct{} // closed and replaced on every new line
}

func newProcLog() *procLog { return &procLog{notify: make(chan struct{})} }

func (l *procLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.partial = append(l.partial, p...)
	added := false
	for {
		i := bytes.IndexByte(l.partial, '\n')
		if i < 0 {
			break
		}
		l.lines = append(l.lines, string(l.partial[:i]))
		l.partial = l.partial[i+1:]
		added = true
	}
	if added {
		close(l.notify)
		l.notify = make(chan struct{})
	}
	return len(p), nil
}

func (l *procLog) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.lines)
}

// all returns the whole output, including a last unterminated line.
func (l *procLog) all() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n") + "\n" + string(l.partial)
}

func (l *procLog) tail(n int) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	from := max(len(l.lines)-n, 0)
	return strings.Join(l.lines[from:], "\n")
}

// wait returns the index of the first line at or after from that contains
// s; it gives up when exited is closed (after a last look) or timeout passes.
func (l *procLog) wait(s string, from int, timeout time.Duration, exited <-chan struct{}) (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	gone := false
	for {
		l.mu.Lock()
		for i := from; i < len(l.lines); i++ {
			if strings.Contains(l.lines[i], s) {
				l.mu.Unlock()
				return i, nil
			}
		}
		from = max(from, len(l.lines))
		notify := l.notify
		l.mu.Unlock()
		if gone {
			return 0, fmt.Errorf("exited before logging %q", s)
		}
		select {
		case <-notify:
		case <-exited:
			gone = true // one more look at what it printed last
		case <-ctx.Done():
			return 0, fmt.Errorf("no %q in the log within %v", s, timeout)
		}
	}
}
