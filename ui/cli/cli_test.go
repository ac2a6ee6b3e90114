package cli

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/parkinglot/parkinglot/replay"
	"github.com/parkinglot/parkinglot/ui/iostreams"
)

// testFactory is a factory on fake streams whose session is never dialled
// (a test that reaches the broker fails).
func testFactory(t *testing.T) (*Factory, *iostreamsBuffers) {
	t.Helper()
	io, in, out, errOut := iostreams.Test()
	f := NewFactory(io)
	f.Getenv = func(string) string { return "" }
	f.OpenSession = func(context.Context, string) (Session, error) {
		t.Fatal("the command dialled the broker")
		return nil, nil
	}
	return f, &iostreamsBuffers{in: in, out: out, err: errOut}
}

type iostreamsBuffers struct {
	in  interface{ WriteString(string) (int, error) }
	out interface{ String() string }
	err interface{ String() string }
}

// The root maps errors to exit statuses by their type, before anything is
// dialled: usage errors 2, with cobra's own argument and flag errors.
func TestRootExitCodes(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		err  string
	}{
		{[]string{"bogus"}, 2, `unknown command "bogus" (parkinglot --help lists them)`},
		{[]string{"list"}, 2, "accepts 1 arg(s), received 0"},
		{[]string{"list", "q", "--limit", "abc"}, 2, `invalid argument "abc" for "--limit" flag: want a whole number`},
		{[]string{"list", "q", "--limit", "-1"}, 2, "--limit -1: want 0 (all) or more"},
		{[]string{"list", "q", "--filter", "foo ==="}, 2, "bad filter"},
		{[]string{"list", "q", "--nope"}, 2, "unknown flag: --nope"},
		{[]string{"queues", "-z"}, 2, "unknown shorthand flag"},
		{[]string{"show", "q"}, 2, "accepts 2 arg(s), received 1"},
		{[]string{"replay", "q"}, 2, "choose the messages with --id, --all or --filter"},
		{[]string{"replay", "q", "--all", "--id", "x"}, 2, "mutually exclusive"},
		{[]string{"replay", "q", "--all", "--to", "bad"}, 2, "--to destination"},
		{[]string{"replay", "q", "--all", "--to", "a:b", "--target", "origin"}, 2, "--to and --target both say where to send; give one"},
		{[]string{"replay", "q", "--all", "--target", "nope"}, 2, `--target "nope": use origin or queue`},
		{[]string{"replay", "q", "--all", "--rate", "-1"}, 2, "--rate -1"},
		{[]string{"replay", "q", "--all", "--rate", "NaN"}, 2, "--rate NaN: want 0.001 messages per second or more"},
		{[]string{"replay", "q", "--all", "--rate", "Inf"}, 2, "--rate +Inf"},
		{[]string{"replay", "q", "--all", "--rate", "1e-300"}, 2, "--rate 1e-300"},
		{[]string{"import", "f.jsonl", "--rate", "NaN"}, 2, "--rate NaN"},
		{[]string{"replay", "q", "--all", "--window", "-1"}, 2, "--window -1"},
		{[]string{"completion", "tcsh"}, 2, `unknown command "tcsh"`},
		{[]string{"demo", "--queue-type", "stream"}, 2, `--queue-type "stream": want classic or quorum`},
		{[]string{"demo", "--timeout", "-1s"}, 2, "--timeout -1s: want a positive duration"},
		{[]string{"replay", "q", "--all", "--dry-run=maybe"}, 2, "want true or false"},
		{[]string{"edit", "q", "i", "--to", "a:b", "--target", "queue"}, 2, "--to and --target both"},
		{[]string{"delete", "q"}, 2, "choose the messages"},
		{[]string{"export", "q", "--remove"}, 2, "--remove needs --file F"},
		{[]string{"export", "q", "--id", "a", "--filter", "b"}, 2, "--id and --filter are mutually exclusive"},
		{[]string{"import", "-"}, 2, "pass --yes"},
		{[]string{"topology", "declare"}, 2, "-f PIPELINE.yaml is required"},
		{[]string{"daemon", "-f", "x"}, 2, "give a handler"},
		{[]string{"daemon", "-f", "x", "--http", "u", "--exec", "y"}, 2, "not both"},
		{[]string{"daemon", "-f", "x", "--http", "u", "--exec"}, 2, "not both"},
		{[]string{"daemon", "-f", "x", "--exec"}, 2, "--exec needs a command"},
		{[]string{"daemon", "-f", "x", "stray"}, 2, "unexpected arguments"},
		{[]string{"-o", "yaml", "queues"}, 2, `-o "yaml": use text or json`},
		{[]string{"--log-level", "loud", "queues"}, 2, "--log-level"},
		{[]string{"--context", "nope", "queues"}, 2, `no context "nope"`},
		{[]string{"--vhost", "", "queues"}, 2, "--vhost needs a name"},
		{[]string{"list", "q", "--vhost="}, 2, "--vhost needs a name"},
		{[]string{"queues", "extra"}, 2, `unknown command "extra"`},
		{[]string{"tui", "a", "b"}, 2, "accepts at most 1 arg(s)"},
		{[]string{"--config", "/nonexistent/dir/config.yaml", "--version"}, 0, ""},
		{[]string{}, 0, ""}, // no terminal: help
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			f, b := testFactory(t)
			f.ConfigPath = ""
			code := run(context.Background(), f, tc.args)
			if code != tc.code {
				t.Errorf("exit %d, want %d; stderr %q", code, tc.code, b.err.String())
			}
			if tc.err != "" && !strings.Contains(b.err.String(), tc.err) {
				t.Errorf("stderr %q, want %q", b.err.String(), tc.err)
			}
			if strings.Count(b.err.String(), "\n") > 1 {
				t.Errorf("stderr is more than one line: %q", b.err.String())
			}
		})
	}
}

func TestExitCodeByType(t *testing.T) {
	for _, tc := range []struct {
		err  error
		code int
	}{
		{nil, 0},
		{errors.New("invalid argument"), 1}, // EINVAL's text is not a usage error
		{errors.New("unknown command"), 1},
		{usagef("x"), 2},
		{needsYes(), 2},
		{ErrDeclined, 2},
		{replay.Result{Failed: 1}.Err(), 3},
		{cliErr(replay.ErrBadFilter), 2},
		{context.Canceled, 130},
		{&InterruptedError{Err: context.Canceled, Said: true}, 130},
	} {
		if got := ExitCode(tc.err); got != tc.code {
			t.Errorf("ExitCode(%v) = %d, want %d", tc.err, got, tc.code)
		}
	}
}

// Flags become options: each command with a fake run function.
func TestFlagsBecomeOptions(t *testing.T) {
	f, _ := testFactory(t)
	f.Config.ParkingLots = map[string]replay.ParkingLot{"dlq": {Rate: 7}}
	var got *ReplayOptions
	cmd := NewCmdReplay(f, func(_ context.Context, o *ReplayOptions) error { got = o; return nil })
	cmd.SetArgs([]string{"dlq", "--id", "a", "--id", "b", "--to", ":q", "--yes"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if got.Queue != "dlq" || len(got.Select.IDs) != 2 || got.To == nil || got.To.RoutingKey != "q" || got.Target != "" || got.Rate != 7 || !got.Yes || got.Window != replay.DefaultWindow {
		t.Errorf("replay options: %+v", got)
	}

	var del *DeleteOptions
	cmd = NewCmdDelete(f, func(_ context.Context, o *DeleteOptions) error { del = o; return nil })
	cmd.SetArgs([]string{"dlq", "--filter", "attempts > 2"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if del.Queue != "dlq" || del.Select.Filter != "attempts > 2" || del.Yes {
		t.Errorf("delete options: %+v", del)
	}

	var ed *EditOptions
	cmd = NewCmdEdit(f, func(_ context.Context, o *EditOptions) error { ed = o; return nil })
	cmd.SetArgs([]string{"dlq", "m-1", "--target", "queue"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if ed.ID != "m-1" || ed.Target != replay.TargetQueue || ed.Select.IDs[0] != "m-1" {
		t.Errorf("edit options: %+v", ed)
	}

	var d *DaemonOptions
	cmd = NewCmdDaemon(f, func(_ context.Context, o *DaemonOptions) error { d = o; return nil })
	cmd.SetArgs([]string{"-f", "p.yaml", "--exec", "./h.sh", "--its-flag"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if d.File != "p.yaml" || strings.Join(d.Exec, " ") != "./h.sh --its-flag" {
		t.Errorf("daemon options: %+v", d)
	}
}

// The prompt: only "y" proceeds; "n", an empty line, end of input and no
// terminal change nothing and exit 2.
func TestConfirm(t *testing.T) {
	for _, tc := range []struct {
		name, input string
		tty         bool
		want        error
	}{
		{"yes", "y\n", true, nil},
		{"YES", "YES\n", true, nil},
		{"no", "n\n", true, ErrDeclined},
		{"empty", "\n", true, ErrDeclined},
		{"EOF", "", true, ErrDeclined},
		{"partial line", "y", true, ErrDeclined},
		{"no terminal", "y\n", false, ErrNeedsConfirmation},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, b := testFactory(t)
			f.IOStreams.SetTerminal(tc.tty, 80)
			_, _ = b.in.WriteString(tc.input)
			err := confirm(context.Background(), f)
			if !errors.Is(err, tc.want) || (tc.want == nil && err != nil) {
				t.Errorf("confirm = %v, want %v", err, tc.want)
			}
			if tc.want != nil && ExitCode(err) != ExitUsage {
				t.Errorf("exit %d, want 2", ExitCode(err))
			}
			if tc.tty && !strings.Contains(b.out.String(), "proceed? [y/N]") {
				t.Errorf("no prompt: %q", b.out.String())
			}
		})
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // Ctrl-C
	f, _ := testFactory(t)
	f.IOStreams.SetTerminal(true, 80)
	f.IOStreams.In = blockingReader{}
	if err := confirm(ctx, f); !errors.Is(err, ErrDeclined) {
		t.Errorf("Ctrl-C: %v", err)
	}
}

type blockingReader struct{}

func (blockingReader) Read([]byte) (int, error) { select {} }

// Without a terminal the import prompt is not reached: the plan is printed
// and nothing is published (exit 2).
func TestImportWithoutTerminalNeedsYes(t *testing.T) {
	f, b := testFactory(t)
	f.ConfigPath = ""
	dir := t.TempDir()
	path := dir + "/x.jsonl"
	if err := writeFile(path, `{"queue":"q","message":{"body":"aGk="}}`+"\n"); err != nil {
		t.Fatal(err)
	}
	code := run(context.Background(), f, []string{"import", path})
	if code != ExitUsage || !strings.Contains(b.err.String(), "nothing changed: pass --yes to do this without a terminal") {
		t.Errorf("exit %d, stderr %q", code, b.err.String())
	}
	if !strings.Contains(b.out.String(), "1 message(s) in "+path+" to publish") {
		t.Errorf("no plan: %q", b.out.String())
	}
}
