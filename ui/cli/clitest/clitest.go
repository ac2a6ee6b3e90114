package clitest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parkinglot/parkinglot/broker/brokertest"
)

// built is the binary Binary builds, once per test process.
var built struct {
	once sync.Once
	dir  string
	path string
	err  error
}

// Binary is the parkinglot binary the tests run: $PARKINGLOT_BIN (make test
// builds it), or the repository's main package built once per test process
// (the first caller builds it; a failed build fails every caller). A
// package's TestMain calls RemoveBinary when its tests are done.
func Binary(tb testing.TB) string {
	tb.Helper()
	if bin := os.Getenv("PARKINGLOT_BIN"); bin != "" {
		return bin
	}
	built.once.Do(build)
	if built.err != nil {
		tb.Fatal(built.err)
	}
	return built.path
}

func build() {
	root, err := brokertest.ModuleRoot()
	if err != nil {
		built.err = err
		return
	}
	if built.dir, err = os.MkdirTemp("", "parkinglot-test-bin-"); err != nil {
		built.err = err
		return
	}
	built.path = filepath.Join(built.dir, "parkinglot")
	cmd := exec.Command("go", "build", "-o", built.path, ".")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		built.err = fmt.Errorf("go build: %v\n%s", err, out)
	}
}

// RemoveBinary removes the binary Binary built in this test process, if it
// built one.
func RemoveBinary() {
	if built.dir != "" {
		_ = os.RemoveAll(built.dir)
	}
}

// CLI runs the parkinglot binary against the broker under test.
type CLI struct {
	// Env is every run's environment: the test process's, then
	// PARKINGLOT_URL and PARKINGLOT_MANAGEMENT_URL of the broker under
	// test, a config and a state folder of the test's own
	// (XDG_CONFIG_HOME, XDG_STATE_HOME), then what NewCLI was given; when
	// a variable is set twice, the later wins.
	Env []string
	// Timeout bounds each Run; the process is killed after it.
	Timeout time.Duration

	tb  testing.TB
	bin string
}

// NewCLI returns a runner of the binary (built now, unless
// $PARKINGLOT_BIN) whose environment ends with env.
func NewCLI(tb testing.TB, env ...string) *CLI {
	tb.Helper()
	c := &CLI{tb: tb, bin: Binary(tb), Timeout: 90 * time.Second}
	c.Env = append(os.Environ(),
		"PARKINGLOT_URL="+brokertest.URL(),
		"PARKINGLOT_MANAGEMENT_URL="+brokertest.ManagementURL(),
		"XDG_CONFIG_HOME="+tb.TempDir(),
		"XDG_STATE_HOME="+tb.TempDir(),
	)
	c.Env = append(c.Env, env...)
	return c
}

// Command is the binary with args and c.Env, for a test that starts it and
// waits for it itself (a daemon, a pseudo-terminal); ctx kills it.
func (c *CLI) Command(ctx context.Context, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, c.bin, args...)
	cmd.Env = c.Env
	return cmd
}

// Result is one run of the binary: its exit status and output.
type Result struct {
	Code           int
	Stdout, Stderr string
}

// Run runs the binary to completion with stdin as its input and returns
// its exit status and output; it fails the test if the binary could not
// be run. A run killed after c.Timeout has code -1.
func (c *CLI) Run(stdin string, args ...string) Result {
	c.tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), c.Timeout)
	defer cancel()
	cmd := c.Command(ctx, args...)
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	res := Result{Stdout: stdout.String(), Stderr: stderr.String()}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		res.Code = ee.ExitCode()
	default:
		c.tb.Fatalf("run parkinglot %s: %v", strings.Join(args, " "), err)
	}
	return res
}
