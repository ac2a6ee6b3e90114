//go:build integration

package cli_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker/brokertest"
	"github.com/parkinglot/parkinglot/ui/cli/clitest"
)

// TestAClosedPipeIsAnErrorNotASignal: `export Q | head -1` and `list Q |
// head -1` close the pipe while parkinglot still holds the messages. The
// write fails; the command gives the messages back as after any error,
// not killed by SIGPIPE (whose dropped connection counts against a quorum
// queue's delivery limit), then exits 141 saying nothing, as a shell
// reports a process SIGPIPE killed (git's `git log | head`); every message
// is still parked.
func TestAClosedPipeIsAnErrorNotASignal(t *testing.T) {
	ch := brokertest.Channel(t)
	q := brokertest.Name(t, "piped.dlq")
	brokertest.DeclareQueue(t, ch, q, nil)
	body := []byte(`{"pad":"` + strings.Repeat("x", 2048) + `"}`)
	msgs := make([]amqp.Publishing, 300) // ~700 KiB of export: far more than a pipe holds
	for i := range msgs {
		msgs[i] = amqp.Publishing{MessageId: fmt.Sprintf("m-%03d", i), Body: body, ContentType: "application/json"}
	}
	brokertest.PublishMany(t, ch, "", q, msgs)
	brokertest.WaitDepth(t, q, len(msgs), 10*time.Second)
	c := clitest.NewCLI(t)
	for _, args := range [][]string{{"export", q}, {"-o", "json", "list", q}} {
		t.Run(args[0], func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			cmd := c.Command(ctx, args...)
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			var stderr strings.Builder
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			if _, err := bufio.NewReader(out).ReadString('\n'); err != nil {
				t.Fatalf("no first line: %v", err)
			}
			_ = out.Close() // head has what it wanted
			err = cmd.Wait()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 141 {
				t.Fatalf("%v: %v, want exit 141 (an exit, not a signal); stderr %q", args, err, stderr.String())
			}
			if stderr.Len() > 0 {
				t.Errorf("stderr %q, want nothing: no one reads a closed pipe's news", stderr.String())
			}
			brokertest.WaitDepth(t, q, len(msgs), 15*time.Second)
		})
	}
}
