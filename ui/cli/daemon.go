package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/cobra"

	"github.com/parkinglot/parkinglot/replay"
	"github.com/parkinglot/parkinglot/replay/watch"
	"github.com/parkinglot/parkinglot/retrycore"
	"github.com/parkinglot/parkinglot/retrycore/daemon"
)

// DaemonOptions are `parkinglot daemon`'s.
type DaemonOptions struct {
	*Factory
	File, HTTP, MetricsAddr string
	// WatchInterval: how often the parking lot's depth and oldest age are
	// read for /metrics.
	WatchInterval time.Duration
	Exec          []string // the handler's argv with --exec
}

// NewCmdDaemon is `parkinglot daemon -f PIPELINE.yaml [--metrics-addr ADDR]
// (--exec CMD… | --http URL)`. --exec takes the rest of the command line as
// the handler's argv, so flags parse only up to the first argument that is
// not a flag (or "--"); a daemon flag typed after the handler's command is
// refused (flagAfterExec), so no order of the flags is silently misread.
func NewCmdDaemon(f *Factory, runF func(context.Context, *DaemonOptions) error) *cobra.Command {
	opts := &DaemonOptions{Factory: f}
	var exec bool
	cmd := &cobra.Command{
		Use:   "daemon -f PIPELINE.yaml [--metrics-addr ADDR] [--watch-interval D] (--exec CMD… | --http URL)",
		Short: "Run the retry consumer: handle the main queue, retry through the delay tiers, park failures",
		Long: `Run the retry consumer on the pipeline's main queue.

--exec CMD [ARGS…] runs CMD per message (no shell): the body on stdin, and
PARKINGLOT_MESSAGE_ID, PARKINGLOT_ROUTING_KEY, PARKINGLOT_ATTEMPT (1-based)
and PARKINGLOT_HEADERS (JSON) in the environment. Exit 0 acks, exit 65
parks at once, anything else (or the timeout) retries. Everything after
--exec is the command: put the daemon's flags before it. A daemon flag
after the command (--exec ./h.sh --metrics-addr :9090) is refused; to pass
such a flag to the handler, use "--exec -- CMD --its-flags".

--http URL POSTs each message: 2xx acks, 4xx other than 408/429 parks,
anything else retries.`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if exec && cmd.ArgsLenAtDash() != 0 {
				if fl := flagAfterExec(cmd, args); fl != "" {
					return usagef("daemon: %s after --exec is passed to the handler; put daemon flags before --exec, or use --exec -- CMD… to pass it on", fl)
				}
			}
			if opts.File == "" {
				return usagef("daemon: -f PIPELINE.yaml is required")
			}
			if !exec && len(args) > 0 {
				return usagef("daemon: unexpected arguments %q (did you mean --exec %s?)", args, args[0])
			}
			if exec {
				opts.Exec = args
			}
			// The rule is the engine's; the words name this command's flags
			// (--exec given bare counts as a handler asked for).
			switch err := daemon.CheckHandler(opts.Exec, opts.HTTP); {
			case errors.Is(err, daemon.ErrTwoHandlers), exec && opts.HTTP != "":
				return usagef("daemon: give --exec CMD… or --http URL, not both")
			case exec && len(args) == 0:
				return usagef("daemon: --exec needs a command, e.g. --exec ./handler.sh")
			case err != nil:
				return usagef("daemon: give a handler: --exec CMD… or --http URL")
			}
			if opts.WatchInterval < time.Second { // as watch's --interval
				return usagef("daemon: --watch-interval must be at least 1s, not %s", opts.WatchInterval)
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return daemonRun(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.SetInterspersed(false)
	fl.StringVarP(&opts.File, "file", "f", "", "pipeline file (YAML)")
	fl.BoolVar(&exec, "exec", false, "run the rest of the command line per message (no shell)")
	fl.StringVar(&opts.HTTP, "http", "", "POST each message to this URL")
	fl.StringVar(&opts.MetricsAddr, "metrics-addr", "", "serve Prometheus metrics at http://ADDR/metrics, and /livez and /readyz (e.g. :9090)")
	fl.DurationVar(&opts.WatchInterval, "watch-interval", watch.DefaultInterval, "with --metrics-addr: how often the parking lot's depth and oldest age are read")
	return cmd
}

// flagAfterExec is the first of the handler's arguments (after its
// command) that names one of the daemon's own flags or a global one, as
// "--name" or "-n": typed there it reaches the handler, not the daemon.
func flagAfterExec(cmd *cobra.Command, args []string) string {
	if len(args) < 2 {
		return ""
	}
	for _, a := range args[1:] {
		if a == "--" {
			break // explicitly the handler's from here
		}
		switch {
		case strings.HasPrefix(a, "--") && len(a) > 2:
			name, _, _ := strings.Cut(a[2:], "=")
			if cmd.Flags().Lookup(name) != nil {
				return "--" + name
			}
		case strings.HasPrefix(a, "-") && len(a) >= 2 && (len(a) == 2 || a[2] == '='):
			if cmd.Flags().ShorthandLookup(a[1:2]) != nil {
				return a[:2]
			}
		}
	}
	return ""
}

func daemonRun(ctx context.Context, opts *DaemonOptions) error {
	p, err := retrycore.LoadPipeline(opts.File)
	if err != nil {
		return &UsageError{err} // a mistake in the file, like one in the config
	}
	m, check, err := opts.checkedManagement(ctx, "parkinglot daemon "+p.Name) // optional
	if err != nil {
		return err
	}
	var extra []prometheus.Collector
	if opts.MetricsAddr != "" {
		// The parking lot's depth and oldest age, under the watch's names,
		// read by the watch's engine on a connection of its own.
		w := watch.New(watch.Options{
			Queues:     []string{p.Error.Queue},
			NoDiscover: true,
			Interval:   opts.WatchInterval,
			// Scans read a quorum parking lot's head (the groups are
			// not exported here).
			ScanInterval: max(opts.WatchInterval, watch.DefaultScanInterval),
			Open: func(ctx context.Context, _ string) (*replay.Session, error) {
				return opts.engineSession(ctx, "daemon "+p.Name+" watch")
			},
			Log: opts.Log,
		})
		wctx, cancel := context.WithCancel(ctx)
		ran := make(chan struct{})
		go func() {
			defer close(ran)
			_ = w.Run(wctx)
		}()
		defer func() { cancel(); <-ran }()
		extra = append(extra, watch.NewParkedCollector(w))
	}
	handlerOut, flush := opts.handlerOutput()
	defer flush()
	err = daemon.Serve(ctx, daemon.ServeOptions{
		Collectors:      extra,
		Pipeline:        p,
		Exec:            opts.Exec,
		HTTP:            opts.HTTP,
		MetricsAddr:     opts.MetricsAddr,
		Broker:          opts.Conn.Options("parkinglot daemon " + p.Name),
		Management:      m,
		ManagementCheck: check,
		Logger:          opts.Log,
		HandlerStdout:   handlerOut,
	})
	if le, ok := errors.AsType[*daemon.MetricsListenError](err); ok {
		return fmt.Errorf("--metrics-addr %s: %w", le.Addr, le.Err)
	}
	return err
}
