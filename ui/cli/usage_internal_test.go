package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/replay"
	"github.com/parkinglot/parkinglot/ui/iostreams"
)

// runLine runs args on a test factory and returns the exit status and
// stderr, failing the test unless stderr is at most one line.
func runLine(t *testing.T, f *Factory, b *iostreamsBuffers, args ...string) (int, string) {
	t.Helper()
	code := run(context.Background(), f, args)
	stderr := b.err.String()
	if strings.Count(strings.TrimRight(stderr, "\n"), "\n") > 0 {
		t.Errorf("%v: stderr is more than one line: %q", args, stderr)
	}
	return code, stderr
}

// A mistyped command is refused (exit 2) with cobra's suggestion on the
// same line; help for a command group still exits 0.
func TestUnknownCommandSuggests(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"lsit"}, 2, `parkinglot: unknown command "lsit"; did you mean "list"?`},
		{[]string{"qeues", "--url", "amqp://h/"}, 2, `unknown command "qeues"; did you mean "queues"?`},
		{[]string{"sho", "q", "id"}, 2, `did you mean "show"?`},
		{[]string{"bogus"}, 2, `unknown command "bogus" (parkinglot --help lists them)`},
		{[]string{"topology", "declar"}, 2, `unknown command "declar" for "parkinglot topology"; did you mean "declare"?`},
		{[]string{"completion", "bsh"}, 2, `unknown command "bsh" for "parkinglot completion"; did you mean "bash" or "zsh"?`},
		{[]string{"repaly", "q"}, 2, `did you mean "replay"?`},
		{[]string{"rep", "q"}, 2, `did you mean "replay"?`},
		{[]string{"topology"}, 0, ""},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			f, b := testFactory(t)
			f.ConfigPath = ""
			code, stderr := runLine(t, f, b, tc.args...)
			if code != tc.code || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, stderr, tc.code, tc.want)
			}
		})
	}
}

// A pipeline file's mistake is bad input, exit 2, as a config file's is
// (the replay's --pipeline already was); it is read before anything is
// dialled.
func TestPipelineMistakesExit2(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "pipeline.yaml")
	if err := os.WriteFile(bad, []byte("name: x\nmax_retry: 3\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "nope.yaml")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"topology", "declare", "-f", bad}, `unknown key "max_retry"`},
		{[]string{"topology", "declare", "-f", missing}, "no such file"},
		{[]string{"daemon", "-f", bad, "--exec", "true"}, `unknown key "max_retry"`},
		{[]string{"replay", "q", "--all", "--canary", "1", "--pipeline", bad, "--yes"}, `unknown key "max_retry"`},
	} {
		t.Run(tc.args[0], func(t *testing.T) {
			f, b := testFactory(t)
			f.ConfigPath = ""
			if tc.args[0] == "replay" { // the canary's wait is read once the session is open
				f.OpenSession = func(context.Context, string) (Session, error) { return &fakeSession{t: t}, nil }
			}
			code, stderr := runLine(t, f, b, tc.args...)
			if code != ExitUsage || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", code, stderr, tc.want)
			}
		})
	}
}

// --rate, --to and the other flags that say how or where to send are
// worded by their flag, not as a "bad selection" (that is --id, --all and
// --filter).
func TestSendFlagErrorsAreNotSelections(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"replay", "q", "--all", "--rate", "-1"}, "parkinglot: --rate -1: want 0.001 messages per second or more"},
		{[]string{"import", "f.jsonl", "--rate", "0.0001"}, "parkinglot: --rate 0.0001: want 0.001"},
		{[]string{"replay", "q", "--all", "--window", "-1"}, "parkinglot: --window -1: want 1 or more"},
		{[]string{"replay", "q", "--all", "--to", "bad"}, `parkinglot: --to destination "bad": want EXCHANGE:ROUTING_KEY`},
		{[]string{"import", "f.jsonl", "--to", ""}, `parkinglot: --to destination "": want EXCHANGE:ROUTING_KEY`},
		{[]string{"replay", "q", "--all", "--to", ":"}, `parkinglot: --to destination ":": the default exchange routes by queue name`},
		{[]string{"replay", "q", "--all", "--target", "elsewhere"}, `parkinglot: --target "elsewhere": use origin or queue`},
		{[]string{"replay", "q", "--all", "--confirm-timeout", "0s"}, "parkinglot: --confirm-timeout 0s: want a positive duration"},
		{[]string{"replay", "q", "--all", "--canary", "0"}, "parkinglot: --canary 0: want 1 or more"},
		{[]string{"replay", "q", "--all", "--ramp", "1,x"}, `parkinglot: --ramp "1,x": want positive whole numbers`},
		{[]string{"replay", "--status", "r", "--rate", "1"}, "parkinglot: --status tells what became of a run"},
		// Still selections:
		{[]string{"replay", "q"}, "parkinglot: bad selection: choose the messages with --id, --all or --filter"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			f, b := testFactory(t)
			f.ConfigPath = ""
			code, stderr := runLine(t, f, b, tc.args...)
			if code != ExitUsage || !strings.HasPrefix(stderr, tc.want) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", code, stderr, tc.want)
			}
		})
	}
}

// closedPipe is a stdout whose reader has gone, as os.Stdout reports it.
type closedPipe struct{}

func (closedPipe) Write([]byte) (int, error) {
	return 0, &fs.PathError{Op: "write", Path: os.Stdout.Name(), Err: syscall.EPIPE}
}

// A closed stdout (`list Q | head`) ends the command quietly with 141, as
// a shell reports a process SIGPIPE killed (SIGPIPE itself is ignored so
// that the command gives back what it held first). A broken pipe to
// anything else (the broker, a handler) is an error like any other.
func TestClosedStdoutExits141Quietly(t *testing.T) {
	s := &fakeSession{browse: func(o replay.BrowseOptions) (*replay.Browse, error) {
		o.OnBatch([]replay.Summary{{ID: "m-1"}})
		return &replay.Browse{}, nil
	}}
	for _, args := range [][]string{{"list", "q"}, {"-o", "json", "list", "q"}, {"--log-format", "json", "list", "q"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			f, b := fakeFactory(t, s)
			streams, _, _, errOut := iostreams.Test()
			streams.Out = closedPipe{}
			f.IOStreams = streams
			if code := run(context.Background(), f, args); code != 141 {
				t.Errorf("exit %d, want 141", code)
			}
			if errOut.Len() > 0 || b.err.String() != "" {
				t.Errorf("stderr %q: want nothing said", errOut.String())
			}
			if !s.closed {
				t.Error("the session was not closed")
			}
		})
	}
	for _, err := range []error{
		fmt.Errorf("publish: %w", &os.SyscallError{Syscall: "write", Err: syscall.EPIPE}), // the broker's socket
		&fs.PathError{Op: "write", Path: "|1", Err: syscall.EPIPE},                        // a handler's stdin
		&fs.PathError{Op: "write", Path: os.Stdout.Name(), Err: syscall.ENOSPC},
	} {
		if got := ExitCode(err); got != ExitError {
			t.Errorf("ExitCode(%v) = %d, want 1", err, got)
		}
	}
}

// A URL that names a user and no password is refused when dialled, exit 2,
// with one line naming the user and the ways to give it, never as the
// password "guest" amqp091-go would send. Commands that dial nothing still
// run, and `config` says a connection would be refused.
func TestUserWithoutPasswordIsRefused(t *testing.T) {
	// rabbit.invalid: nothing to reach; the refusal comes before any dial.
	for _, url := range []string{"amqp://ops@rabbit.invalid:5672/", "amqp://guest@rabbit.invalid:5672/", "amqp://a:b@rabbit.invalid:5672/,amqp://ops@rabbit.invalid:5672/"} {
		t.Run(url, func(t *testing.T) {
			f, b, _ := secretFactory(t, "", map[string]string{"PARKINGLOT_URL": url})
			f.OpenSession = nil // the real dial, which must refuse before the network
			code, stderr := runLine(t, f, b, "--config", f.ConfigPath, "list", "q")
			user := "ops"
			if strings.Contains(url, "guest@") {
				user = "guest"
			}
			want := `no password given for user "` + user + `" (write it in the URL, or set PARKINGLOT_PASSWORD_FILE, or the context's password_file or password_command)`
			if code != ExitUsage || !strings.Contains(stderr, want) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", code, stderr, want)
			}
			if strings.Contains(stderr, ":guest@") || strings.Contains(stderr, ":b@") {
				t.Errorf("stderr %q shows a password", stderr)
			}
		})
	}
	f, b, _ := secretFactory(t, "", map[string]string{"PARKINGLOT_URL": "amqp://ops@rabbit.invalid:5672/"})
	if code := runConfig(f, []string{"alert-rules"}); code != ExitOK {
		t.Errorf("alert-rules: exit %d, stderr %q; it dials nothing", code, b.err.String())
	}
	f, b, _ = secretFactory(t, "", map[string]string{"PARKINGLOT_URL": "amqp://ops@rabbit.invalid:5672/"})
	if code := runConfig(f, []string{"config"}); code != ExitOK || !strings.Contains(b.out.String(), "a connection is refused") {
		t.Errorf("config: exit %d, stdout %q; want it to say a connection is refused", code, b.out.String())
	}
	if got := ExitCode(fmt.Errorf("dial: %w", &broker.NoPasswordError{User: "ops"})); got != ExitUsage {
		t.Errorf("ExitCode(NoPasswordError) = %d, want 2", got)
	}
	if !errors.Is(&broker.NoPasswordError{}, broker.ErrBadURL) {
		t.Error("NoPasswordError does not wrap ErrBadURL")
	}
}
