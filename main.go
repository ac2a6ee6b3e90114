// Command parkinglot browses and replays RabbitMQ parking lots, and runs the
// three-tier retry consumer. main.go is only the composition root: flags
// become options structs, and the packages do the work.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/replay"
)

// version is set by the Makefile (-ldflags "-X main.version=…").
var version = "dev"

// Exit statuses (DESIGN §3).
const (
	exitOK      = 0
	exitError   = 1
	exitUsage   = 2
	exitPartial = 3
)

// usageError marks bad command-line use (exit 2).
type usageError struct{ error }

func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

// app is what every command shares: streams, the resolved connection and a
// logger. Connections are made lazily, so --help never dials a broker.
type app struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	isTerminal     bool // stdin and stdout are a terminal: people, not scripts

	flags    replay.ConnectionFlags
	config   string // --config
	output   string // -o
	logLevel string

	cfg  replay.Config
	conn replay.Connection
	log  *slog.Logger
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	a := &app{stdin: stdin, stdout: stdout, stderr: stderr, isTerminal: isTerminal(stdin) && isTerminal(stdout)}
	root := newRootCmd(a)
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	fmt.Fprintln(stderr, "parkinglot: "+broker.RedactText(oneLine(err.Error())))
	var ue usageError
	switch {
	case errors.As(err, &ue), errors.Is(err, replay.ErrNeedsConfirmation):
		return exitUsage
	case errors.Is(err, replay.ErrNotAllDone):
		return exitPartial
	case isCobraUsage(err):
		return exitUsage
	}
	return exitError
}

func newRootCmd(a *app) *cobra.Command {
	root := &cobra.Command{
		Use:           "parkinglot",
		Short:         "Browse, fix and replay RabbitMQ parking lots; run the three-tier retry consumer",
		Version:       version,
		SilenceErrors: true,
		SilenceUsage:  true,
		Args:          cobra.NoArgs,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			return a.setup(cmd)
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !a.isTerminal {
				return cmd.Help()
			}
			return runTUI(cmd.Context(), a, "")
		},
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	pf := root.PersistentFlags()
	pf.StringVar(&a.flags.URL, "url", "", "AMQP URL (env PARKINGLOT_URL; default "+broker.Redact(replay.DefaultURL)+")")
	pf.StringVar(&a.flags.ManagementURL, "management-url", "", "management API URL (env PARKINGLOT_MANAGEMENT_URL; default http://<amqp host>:15672 with the AMQP credentials)")
	pf.StringVar(&a.config, "config", replay.DefaultConfigPath(), "config file with contexts and parking-lot defaults")
	pf.StringVar(&a.flags.Context, "context", "", "named context from the config file")
	pf.StringVarP(&a.output, "output", "o", "text", "output format: text or json")
	pf.StringVar(&a.flags.TLS.CA, "tls-ca", "", "CA bundle (PEM) for amqps://")
	pf.StringVar(&a.flags.TLS.Cert, "tls-cert", "", "client certificate (PEM) for amqps://")
	pf.StringVar(&a.flags.TLS.Key, "tls-key", "", "client key (PEM) for amqps://")
	pf.BoolVar(&a.flags.TLS.InsecureSkipVerify, "insecure-skip-verify", false, "do not verify the server's TLS certificate (unsafe; warns)")
	pf.StringVar(&a.logLevel, "log-level", "info", "log level: debug, info, warn, error")

	root.AddCommand(
		newTUICmd(a),
	)
	return root
}

// setup resolves config, environment and flags once, before any command runs.
func (a *app) setup(cmd *cobra.Command) error {
	if a.output != "text" && a.output != "json" {
		return usagef("-o %q: use text or json", a.output)
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(a.logLevel)); err != nil {
		return usagef("--log-level %q: use debug, info, warn or error", a.logLevel)
	}
	a.log = slog.New(slog.NewTextHandler(a.stderr, &slog.HandlerOptions{Level: level, ReplaceAttr: redactAttr}))
	cfg, err := replay.LoadConfig(a.config)
	if err != nil {
		return err
	}
	a.cfg = cfg
	a.flags.EnvURL = os.Getenv("PARKINGLOT_URL")
	a.flags.EnvManagement = os.Getenv("PARKINGLOT_MANAGEMENT_URL")
	conn, err := cfg.Resolve(a.flags)
	if err != nil {
		return usageError{err}
	}
	a.conn = conn
	if conn.TLS.InsecureSkipVerify {
		a.log.Warn("--insecure-skip-verify: the broker's TLS certificate is not checked")
	}
	return nil
}

// redactAttr keeps passwords out of every log line.
func redactAttr(_ []string, at slog.Attr) slog.Attr {
	switch v := at.Value.Any().(type) {
	case string:
		return slog.String(at.Key, broker.RedactText(v))
	case error:
		return slog.String(at.Key, broker.RedactText(v.Error()))
	}
	return at
}

func newTUICmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "tui [QUEUE]",
		Short: "Open the terminal UI (on QUEUE's messages when given)",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			queue := ""
			if len(args) == 1 {
				queue = args[0]
			}
			return runTUI(cmd.Context(), a, queue)
		},
	}
}

// runTUI starts the terminal UI. (Filled in by the ui package's issue.)
func runTUI(_ context.Context, _ *app, _ string) error {
	return errors.New("the terminal UI is not built yet")
}

func isTerminal(f any) bool {
	fd, ok := f.(interface{ Fd() uintptr })
	return ok && term.IsTerminal(int(fd.Fd()))
}

func oneLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// isCobraUsage recognises cobra's own argument errors (wrong arg count,
// unknown command), which it returns as plain errors.
func isCobraUsage(err error) bool {
	msg := err.Error()
	for _, p := range []string{"unknown command", "accepts ", "requires at least", "requires at most", "unknown flag", "unknown shorthand", "required flag", "invalid argument", "if any flags in the group"} {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}
