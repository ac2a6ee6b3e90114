package replay_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"go.uber.org/goleak"
)

// binary is the parkinglot binary the CLI tests run: $PARKINGLOT_BIN, or
// one built once for this test run.
var binary string

// TestMain builds the binary once and fails the package if a test leaves
// goroutines running (a run's loop or committer, a pass, a connection).
func TestMain(m *testing.M) {
	binary = os.Getenv("PARKINGLOT_BIN")
	dir := ""
	if binary == "" {
		var err error
		if dir, err = os.MkdirTemp("", "parkinglot-replay-test-"); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		binary = filepath.Join(dir, "parkinglot")
		build := exec.Command("go", "build", "-o", binary, "..")
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "build the parkinglot binary for the CLI tests:", err)
			_ = os.RemoveAll(dir)
			os.Exit(1)
		}
	}
	goleak.VerifyTestMain(m,
		// amqp091-go's connection reader may still be unwinding right after Close.
		goleak.IgnoreTopFunction("github.com/rabbitmq/amqp091-go.(*Connection).reader"),
		goleak.IgnoreTopFunction("internal/poll.runtime_pollWait"),
		goleak.Cleanup(func(code int) {
			if dir != "" {
				_ = os.RemoveAll(dir)
			}
			os.Exit(code)
		}),
	)
}
