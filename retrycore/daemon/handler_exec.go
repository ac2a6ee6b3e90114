package daemon

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/parkinglot/parkinglot/retrycore"
)

// ExitPermanent is the exit status (EX_DATAERR) with which an exec handler
// says the message is poison: park it now.
const ExitPermanent = 65

// maxHeadersEnv bounds PARKINGLOT_HEADERS: Linux refuses a single
// environment string over 128 KiB (MAX_ARG_STRLEN), which would fail every
// attempt of the message.
const maxHeadersEnv = 96 << 10

// stderrTail is how much of a handler's stderr is kept: enough for the last
// line, whatever the handler prints.
const stderrTail = 8 << 10

// ExecOptions tune an exec handler.
type ExecOptions struct {
	Dir    string    // working directory; empty: the daemon's
	Env    []string  // extra environment (KEY=VALUE), after the daemon's own
	Stdout io.Writer // the handler's stdout; nil: discarded
	// KillGrace is how long Wait may take after the process group was
	// killed or the handler exited, for pipes held by stray grandchildren.
	KillGrace time.Duration
}

// ExecHandler runs a command per message: body on stdin, facts in the
// environment, exit status as the outcome.
type ExecHandler struct {
	path string
	argv []string
	opts ExecOptions
}

// NewExecHandler checks that argv[0] can be run (exec.LookPath: a missing
// or non-executable handler is an error now, not an endless retry loop)
// and returns the handler. No shell is involved unless argv says "sh -c".
func NewExecHandler(argv []string, opts ExecOptions) (*ExecHandler, error) {
	if len(argv) == 0 || strings.TrimSpace(argv[0]) == "" {
		return nil, errors.New("exec handler: no command given")
	}
	path, err := exec.LookPath(argv[0])
	if err != nil {
		return nil, fmt.Errorf("exec handler %q: %w", argv[0], lookPathReason(argv[0], err))
	}
	if opts.KillGrace <= 0 {
		opts.KillGrace = 2 * time.Second
	}
	return &ExecHandler{path: path, argv: append([]string(nil), argv...), opts: opts}, nil
}

// lookPathReason says in words why a command cannot run.
func lookPathReason(name string, err error) error {
	st, statErr := os.Stat(name)
	switch {
	case strings.ContainsRune(name, os.PathSeparator) && statErr != nil:
		return errors.New("no such file")
	case statErr == nil && st.IsDir():
		return errors.New("is a directory")
	case statErr == nil && st.Mode()&0o111 == 0:
		return errors.New("not executable (chmod +x it)")
	case errors.Is(err, exec.ErrNotFound):
		return errors.New("not found in $PATH")
	}
	return err
}

// Handle runs the command once. Exit 0 is done, exit 65 permanent, any
// other exit, a signal or the context's deadline transient; the last
// non-empty stderr line is the error text. On the deadline the whole
// process group is killed, so a hung child cannot outlive its message.
func (h *ExecHandler) Handle(ctx context.Context, d Delivery) error {
	cmd := exec.CommandContext(ctx, h.path, h.argv[1:]...)
	cmd.Args[0] = h.argv[0]
	cmd.Dir = h.opts.Dir
	cmd.Stdin = bytes.NewReader(d.Body)
	cmd.Stdout = h.opts.Stdout
	tail := &tailBuffer{max: stderrTail}
	cmd.Stderr = tail
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		// The negative pid is the process group: the handler and
		// everything it started.
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	cmd.WaitDelay = h.opts.KillGrace
	cmd.Env = append(handlerEnviron(), h.opts.Env...)
	cmd.Env = append(cmd.Env,
		"PARKINGLOT_MESSAGE_ID="+d.MessageID,
		"PARKINGLOT_ROUTING_KEY="+d.RoutingKey,
		"PARKINGLOT_ATTEMPT="+strconv.Itoa(d.Attempt),
		"PARKINGLOT_HEADERS="+headersEnv(d),
	)

	err := cmd.Run()
	line := tail.lastLine()
	if ctx.Err() != nil && err != nil {
		return &killedError{line: line, cause: ctx.Err()}
	}
	if err == nil {
		return nil
	}
	if errors.Is(err, exec.ErrWaitDelay) && cmd.ProcessState != nil && cmd.ProcessState.Success() {
		// The handler exited 0; something it left running in the
		// background still held its stderr: done, not a failure to retry.
		return nil
	}
	var exitErr *exec.ExitError
	if !errors.As(err, &exitErr) {
		// Start failed (the file vanished or lost its x bit since start-up):
		// transient, the operator can fix it.
		return fmt.Errorf("run handler: %w", err)
	}
	text := line
	if text == "" {
		text = describeExit(exitErr)
	}
	if exitErr.ExitCode() == ExitPermanent {
		return Permanent(errors.New(text))
	}
	return errors.New(text)
}

// secretEnv holds the daemon's own connection settings: they carry the
// broker password, which a handler has no need to see.
var secretEnv = map[string]bool{"PARKINGLOT_URL": true, "PARKINGLOT_MANAGEMENT_URL": true, "PARKINGLOT_PASSWORD_FILE": true, "AMQP_URL": true, "MANAGEMENT_URL": true}

// handlerEnviron is the daemon's environment without its credentials.
func handlerEnviron() []string {
	env := os.Environ()
	out := env[:0:0]
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if !secretEnv[k] {
			out = append(out, kv)
		}
	}
	return out
}

// killedError is a handler stopped by its context (the timeout): the
// process group was killed.
type killedError struct {
	line  string // last stderr line, if any
	cause error
}

func (e *killedError) Error() string {
	s := "process group killed"
	if e.line != "" {
		s += "; last stderr: " + e.line
	}
	return s
}

func (e *killedError) Unwrap() error { return e.cause }

// describeExit is the error text of a handler that printed nothing.
func describeExit(e *exec.ExitError) string {
	if ws, ok := e.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return "handler killed by signal " + ws.Signal().String()
	}
	return "handler exited with status " + strconv.Itoa(e.ExitCode())
}

// headersEnv is PARKINGLOT_HEADERS, without x-death when the full form is
// too large for one environment string, and "{}" if still too large.
func headersEnv(d Delivery) string {
	s := string(PlainHeaders(d.Headers))
	if len(s) <= maxHeadersEnv {
		return s
	}
	if s = string(PlainHeaders(withoutDeath(d))); len(s) <= maxHeadersEnv {
		return s
	}
	return "{}"
}

// tailBuffer keeps only the last max bytes written to it, so a handler
// printing megabytes to stderr costs a few KiB.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := len(p)
	if len(p) >= t.max {
		t.buf = append(t.buf[:0], p[len(p)-t.max:]...)
		return n, nil
	}
	if over := len(t.buf) + len(p) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	t.buf = append(t.buf, p...)
	return n, nil
}

// lastLine is the last non-empty line, one line of at most MaxErrorLen.
func (t *tailBuffer) lastLine() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	lines := strings.Split(string(t.buf), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if s := strings.TrimSpace(lines[i]); s != "" {
			return retrycore.OneLine(s)
		}
	}
	return ""
}
