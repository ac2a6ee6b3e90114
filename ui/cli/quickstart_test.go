//go:build integration

package cli_test

import (
	"context"
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

// quickStartInstall is the quick start's install line. The test puts the
// binary under test on PATH in its place (a `make build` here would
// replace the binary other tests are running).
const quickStartInstall = `make build && export PATH="$PWD/bin:$PATH"`

// TestQuickStartAsWritten runs the README's quick start as it is printed
// there, line by line, in a vhost of its own, from the repository's root:
// its pipeline file is the one shown, the topology is declared, the daemon
// runs the example handler, the message published is parked after its
// retries, listed, shown and replayed, and the clean-up leaves none of the
// pipeline's queues. Where a person would run `list` again until the
// message is there, the test waits for it to be parked.
func TestQuickStartAsWritten(t *testing.T) {
	root, err := brokertest.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	section := string(readme)
	start := strings.Index(section, "## Quick start")
	if start < 0 {
		t.Fatal("README.md has no quick start")
	}
	section = section[start:]
	section = section[:strings.Index(section[3:], "\n## ")+3]
	yamlBlock, shBlock := fenced(t, section, "yaml"), fenced(t, section, "sh")
	file, err := os.ReadFile(filepath.Join(root, "testdata", "pipelines", "quickstart.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if yamlBlock != string(file) {
		t.Errorf("the quick start's pipeline differs from testdata/pipelines/quickstart.yaml:\n%s\n---\n%s", yamlBlock, file)
	}
	lines := strings.Split(strings.TrimSpace(shBlock), "\n")
	if lines[0] != quickStartInstall {
		t.Fatalf("the quick start's install line is %q; this test stands in for %q", lines[0], quickStartInstall)
	}

	bin := t.TempDir()
	if err := os.Symlink(clitest.Binary(t), filepath.Join(bin, "parkinglot")); err != nil {
		t.Fatal(err)
	}
	vurl, ch := brokertest.VhostChannel(t)
	home := t.TempDir()
	env := append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"), "PARKINGLOT_URL="+vurl,
		"PARKINGLOT_MANAGEMENT_URL="+brokertest.ManagementURL(), "XDG_CONFIG_HOME="+home, "XDG_STATE_HOME="+home)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	shell := func(line string) *exec.Cmd {
		cmd := exec.CommandContext(ctx, "bash", "-c", line)
		cmd.Dir, cmd.Env = root, env
		return cmd
	}
	var daemon *exec.Cmd
	var daemonOut strings.Builder
	defer func() {
		if daemon != nil {
			_ = daemon.Process.Kill()
			_ = daemon.Wait()
		}
	}()
	for _, line := range lines[1:] {
		switch {
		case strings.HasSuffix(line, " &"):
			daemon = shell("exec " + strings.TrimSuffix(line, " &"))
			daemon.Stdout, daemon.Stderr = &daemonOut, &daemonOut
			if err := daemon.Start(); err != nil {
				t.Fatalf("%s: %v", line, err)
			}
			continue
		case strings.HasPrefix(line, "kill %1 && "):
			if daemon == nil {
				t.Fatalf("%s: no daemon started before", line)
			}
			_ = daemon.Process.Signal(syscall.SIGTERM)
			if err := daemon.Wait(); err != nil {
				t.Errorf("the daemon ended with %v:\n%s", err, daemonOut.String())
			}
			daemon = nil
			line = strings.TrimPrefix(line, "kill %1 && ")
		case strings.Contains(line, "parkinglot list payment.error.dlq"):
			brokertest.Eventually(t, time.Minute, 100*time.Millisecond, func() bool {
				q, err := ch.QueueDeclarePassive("payment.error.dlq", true, false, false, false, nil)
				return err == nil && q.Messages == 1
			}, func() string {
				return "the published message was never parked; the daemon said:\n" + daemonOut.String()
			})
		}
		out, err := shell(line).CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", line, err, out)
		}
		t.Logf("$ %s\n%s", line, out)
		if strings.Contains(line, " list ") && !strings.Contains(string(out), "o-4711") {
			t.Errorf("%s: the parked message is not listed:\n%s", line, out)
		}
	}
	conn, err := amqp.Dial(vurl)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, q := range []string{"payment.main.queue", "payment.retry.1s", "payment.retry.2s", "payment.retry.3s", "payment.error.dlq"} {
		qch, err := conn.Channel() // a 404 closes its channel
		if err != nil {
			t.Fatal(err)
		}
		if _, err := qch.QueueDeclarePassive(q, true, false, false, false, nil); err == nil {
			t.Errorf("%s still there after the clean-up", q)
			_ = qch.Close()
		}
	}
}

// fenced is the first ```lang block of text.
func fenced(t *testing.T, text, lang string) string {
	t.Helper()
	open := "```" + lang + "\n"
	i := strings.Index(text, open)
	if i < 0 {
		t.Fatalf("no %s block", lang)
	}
	rest := text[i+len(open):]
	j := strings.Index(rest, "```")
	if j < 0 {
		t.Fatalf("the %s block does not end", lang)
	}
	return rest[:j]
}
