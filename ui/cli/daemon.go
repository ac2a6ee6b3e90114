package cli

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/parkinglot/parkinglot/retrycore"
)

// DaemonOptions are `parkinglot daemon`'s.
type DaemonOptions struct {
	*Factory
	File, HTTP, MetricsAddr string
	Exec                    []string // the handler's argv with --exec
}

// NewCmdDaemon is `parkinglot daemon -f PIPELINE.yaml (--exec CMD… | --http
// URL)`. --exec takes the rest of the command line as the handler's argv,
// so flags parse only up to the first argument that is not a flag (or
// "--").
func NewCmdDaemon(f *Factory, runF func(context.Context, *DaemonOptions) error) *cobra.Command {
	opts := &DaemonOptions{Factory: f}
	var exec bool
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
			case opts.File == "":
				return usagef("daemon: -f PIPELINE.yaml is required")
			case exec && opts.HTTP != "":
				return usagef("daemon: give --exec CMD… or --http URL, not both")
			case exec && len(args) == 0:
				return usagef("daemon: --exec needs a command, e.g. --exec ./handler.sh")
			case !exec && opts.HTTP == "":
				return usagef("daemon: give a handler: --exec CMD… or --http URL")
			case !exec && len(args) > 0:
				return usagef("daemon: unexpected arguments %q (did you mean --exec %s?)", args, args[0])
			}
			if exec {
				opts.Exec = args
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
	fl.StringVar(&opts.MetricsAddr, "metrics-addr", "", "serve Prometheus metrics at http://ADDR/metrics (e.g. :9090)")
	return cmd
}

func daemonRun(ctx context.Context, opts *DaemonOptions) error {
	p, err := retrycore.LoadPipeline(opts.File)
	if err != nil {
		return err
	}
	m, _ := opts.Conn.Management() // optional
	return retrycore.RunDaemon(ctx, retrycore.DaemonOptions{
		Pipeline:      p,
		Exec:          opts.Exec,
		HTTP:          opts.HTTP,
		MetricsAddr:   opts.MetricsAddr,
		Broker:        opts.Conn.Options("parkinglot daemon " + p.Name),
		Management:    m,
		Logger:        opts.Log,
		HandlerStdout: opts.IOStreams.ErrOut,
	})
}
