package cli

import (
	"context"
	"errors"
	"log/slog"
	"strings"

	"github.com/spf13/cobra"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/replay"
	"github.com/parkinglot/parkinglot/ui/iostreams"
)

// Version is the program's version, set by the entry point.
var Version = "dev"

// Main runs the command line args on streams and returns the exit status:
// errors are printed on one line, and their type says the status.
func Main(ctx context.Context, args []string, streams *iostreams.IOStreams) int {
	f := NewFactory(streams)
	f.Version = Version
	return run(ctx, f, args)
}

func run(ctx context.Context, f *Factory, args []string) int {
	root := NewCmdRoot(f)
	root.SetArgs(args)
	root.SetIn(f.IOStreams.In)
	root.SetOut(f.IOStreams.Out)
	root.SetErr(f.IOStreams.ErrOut)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return ExitOK
	}
	err = refuseMismatch(err)
	code := ExitCode(err)
	var ie *InterruptedError
	switch {
	case code == ExitClosedOutput: // whoever read stdout stopped reading: no one to tell
	case errors.As(err, &ie) && ie.Said: // its summary is the last word
	case code == ExitInterrupted:
		f.say(slog.LevelError, "interrupted", slog.Int("exit", code))
	default:
		f.say(slog.LevelError, errorLine(err), slog.Int("exit", code))
	}
	return code
}

// NewCmdRoot is `parkinglot`: the global flags and every command. Without
// a command it opens the TUI on a terminal, and prints help otherwise.
func NewCmdRoot(f *Factory) *cobra.Command {
	root := &cobra.Command{
		Use:           "parkinglot",
		Short:         "Browse, fix and replay RabbitMQ parking lots; run the three-tier retry consumer",
		Version:       f.Version,
		SilenceErrors: true,
		SilenceUsage:  true,
		Args:          subcommandArgs,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			f.ConfigNamed = cmd.Flags().Changed("config")
			// watch has a --vhost of its own (repeatable): this is the root's.
			if fl := cmd.Flags().Lookup("vhost"); fl == cmd.Root().PersistentFlags().Lookup("vhost") && fl.Changed && f.ConnFlags.Vhost == "" {
				return usagef("--vhost needs a name (/ for the default vhost)")
			}
			f.NoSecrets = cmd.Annotations[noSecrets] != "" || helpOnly(cmd)
			return setup(cmd.Context(), f)
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !f.IOStreams.IsTerminal() {
				return cmd.Help()
			}
			return tuiRun(cmd.Context(), &TUIOptions{Factory: f})
		},
	}
	root.SetFlagErrorFunc(flagError)
	pf := root.PersistentFlags()
	pf.StringVar(&f.ConnFlags.URL, "url", "", "AMQP URL (env PARKINGLOT_URL; default "+broker.Redact(DefaultURL)+")")
	pf.StringVar(&f.ConnFlags.ManagementURL, "management-url", "", "management API URL (env PARKINGLOT_MANAGEMENT_URL; default http://<amqp host>:15672 with the AMQP credentials)")
	pf.StringVar(&f.ConnFlags.Vhost, "vhost", "", "vhost to use, over the URL's and the context's")
	pf.StringVar(&f.ConfigPath, "config", replay.DefaultConfigPath(), "config file with contexts and parking-lot defaults")
	pf.StringVar(&f.ConnFlags.Context, "context", "", "named context from the config file")
	pf.StringVarP(&f.Output, "output", "o", "text", "output format: text or json")
	pf.StringVar(&f.ConnFlags.TLS.CA, "tls-ca", "", "CA bundle (PEM) for amqps://")
	pf.StringVar(&f.ConnFlags.TLS.Cert, "tls-cert", "", "client certificate (PEM) for amqps://")
	pf.StringVar(&f.ConnFlags.TLS.Key, "tls-key", "", "client key (PEM) for amqps://")
	pf.BoolVar(&f.ConnFlags.TLS.InsecureSkipVerify, "insecure-skip-verify", false, "do not verify the server's TLS certificate (unsafe; warns)")
	pf.BoolVar(&f.ConnFlags.AllowManagementMismatch, "allow-management-mismatch", false, "use the management API even when it belongs to another cluster than the AMQP broker (says so)")
	pf.StringVar(&f.LogLevel, "log-level", "info", "log level: debug, info, warn, error")
	pf.StringVar(&f.LogFormat, "log-format", logText, "log lines on stderr: text or json (one object a line)")
	pf.StringArrayVar(&f.DecodeFlags.ProtoPath, "proto-path", nil, "where the imports of --proto files are found (repeatable)")
	pf.StringArrayVar(&f.DecodeFlags.Proto, "proto", nil, "a .proto file or a descriptor set (protoc -o, buf build) to decode protobuf bodies with (repeatable)")
	pf.StringVar(&f.DecodeFlags.MessageType, "message-type", "", "the protobuf message of bodies nothing else says how to read (pkg.Order)")
	pf.StringArrayVar(&f.DecodeFlags.AvroSchema, "avro-schema", nil, "an Avro schema (.avsc) to decode Avro bodies with (repeatable)")

	root.AddCommand(
		NewCmdTUI(f, nil),
		NewCmdTopology(f, nil),
		NewCmdDaemon(f, nil),
		NewCmdQueues(f, nil),
		NewCmdList(f, nil),
		NewCmdSearch(f, nil),
		NewCmdTail(f, nil),
		NewCmdShow(f, nil),
		NewCmdReplay(f, nil),
		NewCmdEdit(f, nil),
		NewCmdDelete(f, nil),
		NewCmdProtect(f, nil),
		NewCmdPublish(f, nil),
		NewCmdExport(f, nil),
		NewCmdImport(f, nil),
		NewCmdDemo(f, nil),
		NewCmdWatch(f, nil),
		NewCmdAlertRules(f, nil),
		NewCmdConfig(f, nil),
	)
	// cobra's completion command prints its help for a shell it does not
	// know ("completion tcsh") and exits 0: a script would not notice.
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		if c.Name() == "completion" {
			c.Args = subcommandArgs // checked only for a runnable command
			c.RunE = func(cmd *cobra.Command, _ []string) error { return cmd.Help() }
		}
	}
	return root
}

// setup resolves config, environment and flags once, before any command
// runs. It dials nothing.
func setup(ctx context.Context, f *Factory) error {
	if f.Output != "text" && f.Output != "json" {
		return usagef("-o %q: use text or json", f.Output)
	}
	if f.LogFormat != logText && f.LogFormat != logJSON {
		bad := f.LogFormat
		f.LogFormat = logText // the error itself is a text line
		return usagef("--log-format %q: use text or json", bad)
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(f.LogLevel)); err != nil {
		return usagef("--log-level %q: use debug, info, warn or error", f.LogLevel)
	}
	f.Log = f.newLogger(level)
	load := replay.LoadConfig // the default path may be absent
	if f.ConfigNamed {
		load = replay.ReadConfig // a file named with --config must exist
	}
	cfg, err := load(f.ConfigPath)
	if err != nil {
		return &UsageError{err} // bad configuration, like an unknown --context
	}
	f.Config = cfg
	if f.Bodies, err = replay.BodyReader(ctx, cfg.Decode, f.DecodeFlags); err != nil {
		return &UsageError{err} // a schema that does not load, named
	}
	if w := clearTextWarning(f.ConfigPath, cfg); w != "" {
		f.say(slog.LevelWarn, w)
	}
	f.ConnFlags.EnvURL = f.Getenv("PARKINGLOT_URL")
	f.ConnFlags.EnvManagement = f.Getenv("PARKINGLOT_MANAGEMENT_URL")
	conn, err := resolveConnection(cfg, f.ConnFlags)
	if err != nil {
		return &UsageError{err}
	}
	f.Conn = conn
	if !f.NoSecrets {
		if err := f.fillPasswords(ctx); err != nil {
			return err
		}
	}
	f.managementNotices()
	if conn.TLS.InsecureSkipVerify {
		f.Log.Warn("--insecure-skip-verify: the broker's TLS certificate is not checked")
	}
	return nil
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
