//go:build integration

package retrycore

import (
	"context"
	"os/exec"
	"testing"
	"time"

	"github.com/parkinglot/parkinglot/ui/cli/clitest"
)

// cli runs the binary with the test broker's URLs and an empty config, for
// the tests whose point is a daemon process: its stops, its crashes and
// the cluster's failovers under it.
type cli struct {
	*clitest.CLI
	t *testing.T
}

func newCLI(t *testing.T) *cli {
	c := &cli{CLI: clitest.NewCLI(t), t: t}
	c.Timeout = 60 * time.Second
	return c
}

// command is the binary with args, for a test that starts it itself.
func (c *cli) command(args ...string) *exec.Cmd {
	return c.Command(context.Background(), args...)
}

// run runs a command to completion and returns its exit code and output.
func (c *cli) run(args ...string) (int, string, string) {
	c.t.Helper()
	r := c.Run("", args...)
	return r.Code, r.Stdout, r.Stderr
}
