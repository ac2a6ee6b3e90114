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
	"regexp"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/replay"
	"github.com/parkinglot/parkinglot/retrycore"
	"github.com/parkinglot/parkinglot/ui"
	"github.com/parkinglot/parkinglot/ui/demo"
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
	case errors.As(err, &ue), errors.Is(err, replay.ErrNeedsConfirmation), errors.Is(err, replay.ErrDeclined):
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
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{flagProblem(err)} })
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
		newQueuesCmd(a),
		newListCmd(a),
		newShowCmd(a),
		newReplayCmd(a),
		newEditCmd(a),
		newDeleteCmd(a),
		newExportCmd(a),
		newImportCmd(a),
		newDemoCmd(a),
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

// runTUI opens the terminal UI on queue ("" for the queue list). It
// returns once every message a browse held is given back.
func runTUI(ctx context.Context, a *app, queue string) error {
	return openTUI(ctx, a, ui.Options{Queue: queue})
}

// openTUI is runTUI with every TUI option (the demo adds a notice).
func openTUI(ctx context.Context, a *app, opts ui.Options) error {
	ui.ApplyMemoryLimit()
	quiet := *a
	quiet.log = slog.New(slog.DiscardHandler) // the TUI owns the terminal: log lines would tear it
	s, err := quiet.session(ctx, "tui")
	if err != nil {
		return err
	}
	defer s.Close()
	return ui.Run(ctx, ui.NewSessionBackend(s), ui.RunOptions{
		Options: opts,
		Input:   a.stdin, Output: a.stdout, Errors: a.stderr,
	})
}

// newDemoCmd is `parkinglot demo`: a demo pipeline filled through the
// embedded consumer, then the TUI on its parking lot.
func newDemoCmd(a *app) *cobra.Command {
	var o struct {
		name, queueType string
		noTUI, clean    bool
		timeout         time.Duration
	}
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Declare a demo pipeline, push good, flaky and poison payments through the consumer, open the TUI on its parking lot",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			m, _ := a.conn.Management() // optional
			log := a.log
			if a.logLevel == "info" { // the default: keep the consumer's routine lines out of the demo
				log = slog.New(slog.NewTextHandler(a.stderr, &slog.HandlerOptions{Level: slog.LevelWarn, ReplaceAttr: redactAttr}))
			}
			do := demo.Options{Name: o.name, QueueType: o.queueType, Broker: a.conn.Options("parkinglot demo " + o.name),
				Management: m, Logger: log, Progress: a.stderr, Timeout: o.timeout}
			if o.clean {
				return demo.Clean(cmd.Context(), do)
			}
			sum, err := demo.Seed(cmd.Context(), do)
			if err != nil {
				return err
			}
			if o.noTUI || !a.isTerminal {
				if a.output == "json" {
					return json.NewEncoder(cmd.OutOrStdout()).Encode(sum)
				}
				return sum.WriteText(cmd.OutOrStdout())
			}
			err = openTUI(cmd.Context(), a, ui.Options{Queue: sum.ParkingLot(), Notice: sum.Notice()})
			fmt.Fprintf(a.stderr, "replayed messages wait in %s (the demo's consumer is stopped); `parkinglot demo --clean` removes the demo\n", sum.Pipeline.Main.Queue)
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.name, "name", demo.DefaultName, "pipeline name, the prefix of its queues and exchanges")
	f.StringVar(&o.queueType, "queue-type", "classic", "classic or quorum")
	f.BoolVar(&o.noTUI, "no-tui", false, "seed only and print a summary (for scripts and tests)")
	f.BoolVar(&o.clean, "clean", false, "delete the demo's queues and exchanges, and exit")
	f.DurationVar(&o.timeout, "timeout", 90*time.Second, "how long to wait for the parking lot to fill")
	return cmd
}

func isTerminal(f any) bool {
	fd, ok := f.(interface{ Fd() uintptr })
	return ok && term.IsTerminal(int(fd.Fd()))
}

func oneLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// flagValue matches pflag's text for a value it cannot parse, which quotes
// Go's strconv error: `invalid argument "abc" for "--limit" flag:
// strconv.ParseInt: parsing "abc": invalid syntax`.
var flagValue = regexp.MustCompile(`^(invalid argument ".*" for ".*" flag): strconv\.Parse(Int|Uint|Float|Bool)(?:: parsing ".*")?: (.*)$`)

// flagProblem words a flag value error without Go's function names.
func flagProblem(err error) error {
	m := flagValue.FindStringSubmatch(err.Error())
	if m == nil {
		return err
	}
	want := map[string]string{"Int": "a whole number", "Uint": "a whole number of 0 or more", "Float": "a number", "Bool": "true or false"}[m[2]]
	if strings.Contains(m[3], "out of range") {
		want += " in range"
	}
	return fmt.Errorf("%s: want %s", m[1], want)
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

// ---- browse and replay commands (queues, list, show, replay, edit, delete,
// export, import): flags → replay options → one replay call → print.

// newQueuesCmd is `parkinglot queues`.
func newQueuesCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "queues",
		Short: "List queues with type, depth and consumers; parking lots marked",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := a.session(cmd.Context(), "queues")
			if err != nil {
				return err
			}
			defer s.Close()
			rows, err := s.Queues(cmd.Context())
			if err != nil {
				return err
			}
			if a.output == "json" {
				return replay.WriteJSONLines(a.stdout, rows)
			}
			return replay.WriteQueues(a.stdout, rows)
		},
	}
}

// newListCmd is `parkinglot list QUEUE [--limit N] [--filter EXPR]`.
func newListCmd(a *app) *cobra.Command {
	var o replay.BrowseOptions
	cmd := &cobra.Command{
		Use:   "list QUEUE [--limit N] [--filter EXPR]",
		Short: "List parked messages without removing them: id, parked age, origin, attempts, error",
		Long: `List parked messages without removing them (each is held and given back).

--filter is an expr-lang expression over: id, exchange, routing_key, queue,
error, error_type, attempts, age, parked_at, headers, body, content_type,
redelivered, origin_exchange, origin_routing_key. Examples:
  --filter 'error contains "timeout"'
  --filter 'age > duration("1h") && attempts >= 3'
  --filter 'headers["tenant"] == "acme"'`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Queue = args[0]
			if _, err := replay.CompileFilter(o.Filter); err != nil {
				return cliErr(err)
			}
			if o.Limit < 0 {
				return usagef("--limit %d: want 0 (all) or more", o.Limit)
			}
			s, err := a.session(cmd.Context(), "list")
			if err != nil {
				return err
			}
			defer s.Close()
			table := &replay.SummaryTable{W: a.stdout, Width: a.width()}
			var werr error
			o.OnBatch = func(batch []replay.Summary) {
				if werr != nil {
					return
				}
				if a.output == "json" {
					werr = replay.WriteJSONLines(a.stdout, batch)
				} else {
					werr = table.Write(batch)
				}
			}
			b, err := s.Browse(cmd.Context(), o)
			if err != nil {
				return err
			}
			if werr != nil {
				return werr
			}
			if a.output != "json" && len(b.Summaries) == 0 {
				fmt.Fprintf(a.stdout, "no messages in %s match\n", o.Queue)
			}
			a.notes(b.Notes)
			return nil
		},
	}
	cmd.Flags().IntVar(&o.Limit, "limit", 0, "list at most N messages (0: all)")
	cmd.Flags().StringVar(&o.Filter, "filter", "", "only messages matching this expression")
	return cmd
}

// newShowCmd is `parkinglot show QUEUE ID`.
func newShowCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "show QUEUE ID",
		Short: "Show one message: properties, headers, decoded death history, body",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := a.session(cmd.Context(), "show")
			if err != nil {
				return err
			}
			defer s.Close()
			m, sum, err := s.Find(cmd.Context(), args[0], args[1])
			if err != nil {
				return err
			}
			if a.output == "json" {
				line, err := replay.MessageJSON(args[0], m, sum)
				if err != nil {
					return err
				}
				_, err = fmt.Fprintln(a.stdout, string(line))
				return err
			}
			return replay.WriteMessage(a.stdout, args[0], m, sum, time.Now())
		},
	}
}

// newReplayCmd is `parkinglot replay QUEUE (--id ID… | --all | --filter
// EXPR) [--to EXCHANGE:ROUTING_KEY | --target origin|queue] [--rate N]
// [--dry-run] [--yes]`.
func newReplayCmd(a *app) *cobra.Command {
	var f struct {
		ids                []string
		all, dryRun, yes   bool
		filter, to, target string
		rate               float64
		window             int
	}
	cmd := &cobra.Command{
		Use:   "replay QUEUE (--id ID… | --all | --filter EXPR) [--to EXCHANGE:ROUTING_KEY | --target origin|queue] [--rate N] [--dry-run] [--yes]",
		Short: "Send parked messages back where they came from; each is removed only after the broker confirmed a routed copy",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			sel, err := replay.SelectorFromFlags(f.ids, f.all, f.filter, true)
			if err != nil {
				return cliErr(err)
			}
			to, err := replay.DestinationFlag(f.to)
			if err != nil {
				return cliErr(err)
			}
			if f.to != "" && cmd.Flags().Changed("target") {
				return usagef("--to and --target both say where to send; give one")
			}
			o := replay.Options{Queue: args[0], Select: sel, To: to, Target: replay.Target(f.target), Rate: f.rate, Window: f.window}
			if !cmd.Flags().Changed("rate") {
				o.Rate = a.cfg.ParkingLots[o.Queue].Rate
			}
			s, err := a.session(cmd.Context(), "replay")
			if err != nil {
				return err
			}
			defer s.Close()
			if f.dryRun || !f.yes {
				plan, err := s.Plan(cmd.Context(), o)
				if err != nil {
					return cliErr(err)
				}
				if err := a.printPlan(plan); err != nil {
					return err
				}
				if f.dryRun {
					return replay.Result{Failed: len(plan.Refused) + len(plan.Missing)}.Err()
				}
				if len(plan.Items) == 0 {
					fmt.Fprintln(a.stderr, "nothing to replay")
					return replay.Result{Failed: len(plan.Refused) + len(plan.Missing)}.Err()
				}
				if err := a.confirm(cmd.Context()); err != nil {
					return err
				}
			}
			return a.runAndReport("replayed", func(progress func(replay.Event)) (replay.Result, error) {
				o.Progress = progress
				return s.Replay(cmd.Context(), o)
			})
		},
	}
	fl := cmd.Flags()
	fl.StringArrayVar(&f.ids, "id", nil, "message id (message_id or sha256: content id); repeatable")
	fl.BoolVar(&f.all, "all", false, "every message in the queue")
	fl.StringVar(&f.filter, "filter", "", "messages matching this expression (see parkinglot list --help)")
	fl.StringVar(&f.to, "to", "", "send to EXCHANGE:ROUTING_KEY instead of the origin (\":queue\" for the default exchange)")
	fl.StringVar(&f.target, "target", string(replay.TargetOrigin), "origin (the origin's exchange and routing key) or queue (only the queue that failed)")
	fl.Float64Var(&f.rate, "rate", 0, "at most N messages per second (default: the parking lot's rate in the config, else unlimited)")
	fl.BoolVar(&f.dryRun, "dry-run", false, "show what would go where, change nothing")
	fl.BoolVar(&f.yes, "yes", false, "do not ask (needed without a terminal)")
	fl.IntVar(&f.window, "window", replay.DefaultWindow, "messages in flight (published, not yet confirmed and removed)")
	return cmd
}

// newEditCmd is `parkinglot edit QUEUE ID`.
func newEditCmd(a *app) *cobra.Command {
	var f struct {
		to, target string
		yes        bool
	}
	cmd := &cobra.Command{
		Use:   "edit QUEUE ID [--to EXCHANGE:ROUTING_KEY | --target origin|queue] [--yes]",
		Short: "Edit a parked message's body in $EDITOR, validate it (JSON when the content type says so) and replay it",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			to, err := replay.DestinationFlag(f.to)
			if err != nil {
				return cliErr(err)
			}
			if f.to != "" && cmd.Flags().Changed("target") {
				return usagef("--to and --target both say where to send; give one")
			}
			ctx := cmd.Context()
			o := replay.Options{Queue: args[0], Select: replay.Selector{IDs: []string{args[1]}}, To: to, Target: replay.Target(f.target)}
			s, err := a.session(ctx, "edit")
			if err != nil {
				return err
			}
			defer s.Close()
			if !f.yes && !a.isTerminal {
				plan, err := s.Plan(ctx, o)
				if err != nil {
					return cliErr(err)
				}
				if err := a.printPlan(plan); err != nil {
					return err
				}
				return replay.ErrNeedsConfirmation
			}
			d, err := s.PrepareEdit(ctx, args[0], args[1])
			if err != nil {
				return err
			}
			defer func() { _ = d.Discard() }()
			ed, err := replay.EditorCommand(ctx, d.Path)
			if err != nil {
				return err
			}
			ed.Stdin, ed.Stdout, ed.Stderr = a.stdin, a.stdout, a.stderr
			if err := ed.Run(); err != nil {
				return replay.EditorFailed(ed, err)
			}
			body, err := d.Check()
			if err != nil {
				return err
			}
			if !d.Changed(body) {
				fmt.Fprintln(a.stderr, "note: the body is unchanged")
			}
			if !f.yes {
				dest := "its origin"
				if d.Summary.Origin != nil {
					dest = replay.FormatDestination(d.Summary.Origin.Destination)
				}
				fmt.Fprintf(a.stdout, "replay the edited %s (%d bytes) → %s\n", d.ID, len(body), dest)
				if err := a.confirm(cmd.Context()); err != nil {
					return err
				}
			}
			return a.runAndReport("replayed", func(progress func(replay.Event)) (replay.Result, error) {
				o.Progress = progress
				return s.FinishEdit(ctx, d, o)
			})
		},
	}
	cmd.Flags().StringVar(&f.to, "to", "", "send to EXCHANGE:ROUTING_KEY instead of the origin")
	cmd.Flags().StringVar(&f.target, "target", string(replay.TargetOrigin), "origin or queue (only the queue that failed)")
	cmd.Flags().BoolVar(&f.yes, "yes", false, "do not ask (needed without a terminal)")
	return cmd
}

// newDeleteCmd is `parkinglot delete QUEUE (--id ID… | --filter EXPR) [--yes]`.
func newDeleteCmd(a *app) *cobra.Command {
	var f struct {
		ids      []string
		filter   string
		all, yes bool
	}
	cmd := &cobra.Command{
		Use:   "delete QUEUE (--id ID… | --filter EXPR | --all) [--yes]",
		Short: "Remove chosen messages from a parking lot (audit-logged)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			sel, err := replay.SelectorFromFlags(f.ids, f.all, f.filter, true)
			if err != nil {
				return cliErr(err)
			}
			ctx := cmd.Context()
			s, err := a.session(ctx, "delete")
			if err != nil {
				return err
			}
			defer s.Close()
			if !f.yes {
				if err := a.previewRemoval(ctx, s, "delete", args[0], sel); err != nil {
					return err
				}
			}
			return a.runAndReport("deleted", func(progress func(replay.Event)) (replay.Result, error) {
				return s.Delete(ctx, replay.DeleteOptions{Queue: args[0], Select: sel, Progress: progress})
			})
		},
	}
	cmd.Flags().StringArrayVar(&f.ids, "id", nil, "message id; repeatable")
	cmd.Flags().StringVar(&f.filter, "filter", "", "messages matching this expression")
	cmd.Flags().BoolVar(&f.all, "all", false, "every message in the queue")
	cmd.Flags().BoolVar(&f.yes, "yes", false, "do not ask (needed without a terminal)")
	return cmd
}

// newExportCmd is `parkinglot export QUEUE [--file F] [--filter EXPR] [--remove]`.
func newExportCmd(a *app) *cobra.Command {
	var f struct {
		file, filter string
		ids          []string
		remove, yes  bool
	}
	cmd := &cobra.Command{
		Use:   "export QUEUE [--file F] [--filter EXPR] [--remove [--yes]]",
		Short: "Write messages as JSON Lines (lossless); non-destructive unless --remove",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if f.filter != "" && len(f.ids) > 0 {
				return usagef("--id and --filter are mutually exclusive; give one")
			}
			if _, err := replay.CompileFilter(f.filter); err != nil {
				return cliErr(err)
			}
			if f.remove && (f.file == "" || f.file == "-") {
				return usagef("--remove needs --file F: a message is removed only after its line is fsynced to a file")
			}
			ctx := cmd.Context()
			sel := replay.Selector{IDs: f.ids, Filter: f.filter}
			s, err := a.session(ctx, "export")
			if err != nil {
				return err
			}
			defer s.Close()
			if f.remove && !f.yes {
				if err := a.previewRemoval(ctx, s, "export to "+f.file+" and remove", args[0], sel); err != nil {
					return err
				}
			}
			report := a.stdout
			if f.file == "" || f.file == "-" {
				report = a.stderr // stdout carries the export
			}
			verb := "exported"
			if f.remove {
				verb = "exported and removed"
			}
			return a.runAndReportTo(report, verb, func(progress func(replay.Event)) (replay.Result, error) {
				return s.Export(ctx, replay.ExportOptions{Queue: args[0], Select: sel, File: f.file, Out: a.stdout, Remove: f.remove, Progress: progress})
			})
		},
	}
	cmd.Flags().StringVar(&f.file, "file", "", "export file, created 0600 and never overwritten (default: stdout)")
	cmd.Flags().StringVar(&f.filter, "filter", "", "only messages matching this expression")
	cmd.Flags().StringArrayVar(&f.ids, "id", nil, "only this message id; repeatable")
	cmd.Flags().BoolVar(&f.remove, "remove", false, "remove each message once its line is fsynced to --file")
	cmd.Flags().BoolVar(&f.yes, "yes", false, "do not ask (needed for --remove without a terminal)")
	return cmd
}

// newImportCmd is `parkinglot import FILE [--to EXCHANGE:ROUTING_KEY]`.
func newImportCmd(a *app) *cobra.Command {
	var f struct {
		to     string
		rate   float64
		yes    bool
		window int
	}
	cmd := &cobra.Command{
		Use:   "import FILE [--to EXCHANGE:ROUTING_KEY] [--rate N] [--yes]",
		Short: "Publish an export back (confirmed, mandatory); by default each message to the queue it was exported from",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			to, err := replay.DestinationFlag(f.to)
			if err != nil {
				return cliErr(err)
			}
			if args[0] == "-" && !f.yes {
				return usagef("import -: stdin carries the file, so the confirmation cannot be asked; pass --yes")
			}
			o := replay.ImportOptions{File: args[0], In: a.stdin, To: to, Rate: f.rate, Window: f.window}
			if !f.yes {
				plan, err := replay.PlanImport(o)
				if err != nil {
					return cliErr(err)
				}
				if a.output == "json" {
					err = replay.WriteJSONLines(a.stdout, []replay.ImportPlan{plan})
				} else {
					err = replay.WriteImportPlan(a.stdout, plan)
				}
				if err != nil {
					return err
				}
				if err := a.confirm(cmd.Context()); err != nil {
					return err
				}
			}
			ctx := cmd.Context()
			s, err := a.session(ctx, "import")
			if err != nil {
				return err
			}
			defer s.Close()
			return a.runAndReport("imported", func(progress func(replay.Event)) (replay.Result, error) {
				o.Progress = progress
				return s.Import(ctx, o)
			})
		},
	}
	cmd.Flags().StringVar(&f.to, "to", "", "publish to EXCHANGE:ROUTING_KEY instead of the queue each message was exported from")
	cmd.Flags().Float64Var(&f.rate, "rate", 0, "at most N messages per second (0: unlimited)")
	cmd.Flags().BoolVar(&f.yes, "yes", false, "do not ask (needed without a terminal)")
	cmd.Flags().IntVar(&f.window, "window", replay.DefaultWindow, "messages in flight")
	return cmd
}

// session opens a replay session named for the command (or
// $PARKINGLOT_CONNECTION_NAME, so tests can find and close its connections).
func (a *app) session(ctx context.Context, what string) (*replay.Session, error) {
	name := os.Getenv("PARKINGLOT_CONNECTION_NAME")
	if name == "" {
		name = "parkinglot " + what
	}
	return replay.Open(ctx, a.conn, a.cfg, name, a.log)
}

// cliErr makes selection and filter errors usage errors (exit 2).
func cliErr(err error) error {
	if errors.Is(err, replay.ErrBadFilter) || errors.Is(err, replay.ErrBadSelection) {
		return usageError{err}
	}
	return err
}

// width is the terminal's width, or 0 (the table's default) for pipes.
func (a *app) width() int {
	if !a.isTerminal {
		return 0
	}
	if f, ok := a.stdout.(interface{ Fd() uintptr }); ok {
		if w, _, err := term.GetSize(int(f.Fd())); err == nil {
			return w
		}
	}
	return 0
}

// confirm asks "proceed? [y/N]" on a terminal and returns nil only for a
// "y". Without a terminal (and without --yes, which callers check first),
// a "no", an empty answer, end of input or Ctrl-C, it returns an error that
// exits 2 having changed nothing: callers must act only on nil.
func (a *app) confirm(ctx context.Context) error {
	if !a.isTerminal {
		return replay.ErrNeedsConfirmation
	}
	ok, err := replay.Confirm(ctx, a.stdin, a.stdout, "proceed? [y/N] ")
	if err != nil {
		return err
	}
	if !ok {
		return replay.ErrDeclined
	}
	return nil
}

func (a *app) printPlan(p replay.Plan) error {
	if a.output == "json" {
		return replay.WriteJSONLines(a.stdout, []replay.Plan{p})
	}
	return replay.WritePlan(a.stdout, p, 50)
}

// previewRemoval lists what a removing command would take, and asks.
func (a *app) previewRemoval(ctx context.Context, s *replay.Session, verb, queue string, sel replay.Selector) error {
	b, err := s.Browse(ctx, replay.BrowseOptions{Queue: queue, IDs: sel.IDs, Filter: sel.Filter})
	if err != nil {
		return cliErr(err)
	}
	if a.output == "json" {
		if err := replay.WriteJSONLines(a.stdout, b.Summaries); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(a.stdout, "%s %d message(s) from %s:\n", verb, len(b.Summaries), queue)
		t := &replay.SummaryTable{W: a.stdout, Width: a.width()}
		if err := t.Write(b.Summaries); err != nil {
			return err
		}
	}
	return a.confirm(ctx)
}

// runAndReport runs a removing or sending command with progress (a
// carriage-return line on a terminal, JSON events with -o json) and prints
// its result; exit 3 when some messages were not done.
func (a *app) runAndReport(verb string, do func(func(replay.Event)) (replay.Result, error)) error {
	return a.runAndReportTo(a.stdout, verb, do)
}

func (a *app) runAndReportTo(w io.Writer, verb string, do func(func(replay.Event)) (replay.Result, error)) error {
	pp := &replay.ProgressPrinter{Verb: verb}
	if a.output == "json" {
		pp.JSON = w
	} else if a.isTerminal {
		pp.Terminal = a.stderr
	}
	res, err := do(pp.Event)
	pp.Finish()
	if a.output == "json" {
		if werr := replay.WriteJSONLines(w, []replay.ResultJSON{{Event: replay.EventFinished, Result: res}}); werr != nil && err == nil {
			err = werr
		}
	} else if res.Done+res.Failed+res.Skipped > 0 || err == nil {
		if werr := replay.WriteResult(w, verb, res); werr != nil && err == nil {
			err = werr
		}
	}
	if err != nil {
		return cliErr(err)
	}
	return res.Err()
}

// notes prints what a browse pass wants the user to know, on stderr.
func (a *app) notes(notes []string) {
	for _, n := range notes {
		fmt.Fprintln(a.stderr, "note: "+n)
	}
}
