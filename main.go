// Command parkinglot browses and replays RabbitMQ parking lots, and runs the
// three-tier retry consumer. main.go is only the composition root: flags
// become options structs, and the packages do the work.
package main

import (
	"context"
	"encoding/json"
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
	"github.com/parkinglot/parkinglot/retrycore"
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
		newTopologyCmd(a),
		newDaemonCmd(a),
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

// newTopologyCmd is `parkinglot topology declare -f PIPELINE.yaml`.
func newTopologyCmd(a *app) *cobra.Command {
	topo := &cobra.Command{Use: "topology", Short: "Manage a pipeline's three-tier topology", Args: cobra.NoArgs}
	var file string
	declare := &cobra.Command{
		Use:   "declare -f PIPELINE.yaml",
		Short: "Declare the main, retry (one delay queue per tier) and error tiers; idempotent",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if file == "" {
				return usagef("topology declare: -f PIPELINE.yaml is required")
			}
			p, err := retrycore.LoadPipeline(file)
			if err != nil {
				return err
			}
			m, _ := a.conn.Management() // optional: without it the broker's 406 text is used
			rep, err := retrycore.DeclarePipeline(cmd.Context(), a.conn.Options("parkinglot topology "+p.Name), m, p)
			if err != nil {
				return err
			}
			if a.output == "json" {
				return json.NewEncoder(cmd.OutOrStdout()).Encode(rep)
			}
			return rep.WriteText(cmd.OutOrStdout())
		},
	}
	declare.Flags().StringVarP(&file, "file", "f", "", "pipeline file (YAML)")
	topo.AddCommand(declare)
	return topo
}

// newDaemonCmd is `parkinglot daemon -f PIPELINE.yaml (--exec CMD… | --http URL)`.
// --exec takes the rest of the command line as the handler's argv, so
// flags parse only up to the first argument that is not a flag (or "--").
func newDaemonCmd(a *app) *cobra.Command {
	var o struct {
		file, httpURL, metricsAddr string
		exec                       bool
	}
	cmd := &cobra.Command{
		Use:   "daemon -f PIPELINE.yaml (--exec CMD… | --http URL) [--metrics-addr ADDR]",
		Short: "Run the retry consumer: handle the main queue, retry through the delay tiers, park failures",
		Long: `Run the retry consumer on the pipeline's main queue.

--exec CMD [ARGS…] runs CMD per message (no shell): the body on stdin, and
PARKINGLOT_MESSAGE_ID, PARKINGLOT_ROUTING_KEY, PARKINGLOT_ATTEMPT (1-based)
and PARKINGLOT_HEADERS (JSON) in the environment. Exit 0 acks, exit 65
parks at once, anything else (or the timeout) retries. Everything after
--exec is the command: put the daemon's flags before it, or use
"--exec -- CMD --its-flags".

--http URL POSTs each message: 2xx acks, 4xx other than 408/429 parks,
anything else retries.`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			switch {
			case o.file == "":
				return usagef("daemon: -f PIPELINE.yaml is required")
			case o.exec && o.httpURL != "":
				return usagef("daemon: give --exec CMD… or --http URL, not both")
			case o.exec && len(args) == 0:
				return usagef("daemon: --exec needs a command, e.g. --exec ./handler.sh")
			case !o.exec && o.httpURL == "":
				return usagef("daemon: give a handler: --exec CMD… or --http URL")
			case !o.exec && len(args) > 0:
				return usagef("daemon: unexpected arguments %q (did you mean --exec %s?)", args, args[0])
			}
			p, err := retrycore.LoadPipeline(o.file)
			if err != nil {
				return err
			}
			m, _ := a.conn.Management()
			opts := retrycore.DaemonOptions{
				Pipeline:      p,
				HTTP:          o.httpURL,
				MetricsAddr:   o.metricsAddr,
				Broker:        a.conn.Options("parkinglot daemon " + p.Name),
				Management:    m,
				Logger:        a.log,
				HandlerStdout: a.stderr,
			}
			if o.exec {
				opts.Exec = args
			}
			return retrycore.RunDaemon(cmd.Context(), opts)
		},
	}
	f := cmd.Flags()
	f.SetInterspersed(false)
	f.StringVarP(&o.file, "file", "f", "", "pipeline file (YAML)")
	f.BoolVar(&o.exec, "exec", false, "run the rest of the command line per message (no shell)")
	f.StringVar(&o.httpURL, "http", "", "POST each message to this URL")
	f.StringVar(&o.metricsAddr, "metrics-addr", "", "serve Prometheus metrics at http://ADDR/metrics (e.g. :9090)")
	return cmd
}
