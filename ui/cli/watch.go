package cli

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/spf13/cobra"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/replay"
	"github.com/parkinglot/parkinglot/replay/watch"
)

// DefaultWatchListen is where `parkinglot watch` serves by default: this
// machine only (the metrics name queues and error texts); --listen :9188
// lets a Prometheus elsewhere scrape it.
const DefaultWatchListen = "127.0.0.1:9188"

// WatchOptions are `parkinglot watch`'s.
type WatchOptions struct {
	*Factory
	Queues       []string
	Vhosts       []string
	Listen       string
	Interval     time.Duration
	ScanInterval time.Duration
	TopGroups    int
	NoDiscover   bool // watch the QUEUEs named alone
	// StateFile keeps the ages only the watch knows across a restart;
	// stateSet: --state-file was given ("" then: none).
	StateFile string
	stateSet  bool
	// OnListen, when set, is called with the address once it listens
	// (tests pass --listen 127.0.0.1:0).
	OnListen func(addr string)
}

// NewCmdWatch is `parkinglot watch [QUEUE…]`.
func NewCmdWatch(f *Factory, runF func(context.Context, *WatchOptions) error) *cobra.Command {
	opts := &WatchOptions{Factory: f}
	cmd := &cobra.Command{
		Use:   "watch [QUEUE…] [--listen ADDR]",
		Short: "Export every parking lot's depth, oldest age and error groups to Prometheus (/metrics, /livez, /readyz)",
		Long: `Watch the parking lots and serve their metrics for Prometheus.

The parking lots are those 'parkinglot queues' marks (the config's, the
dead-letter targets of other queues, names like *.dlq), in the connection's
vhost or each --vhost, and every QUEUE named. Depth and the oldest message's
age are read every --interval, the error groups (top --top-groups and
"other") by a harmless browse pass at most every --scan-interval. A scrape
reads nothing from the broker: it gets the last values.

/livez answers 200 while the watch runs; /readyz 200 when it is connected
and every parking lot named was found, 503 otherwise. The watch never takes
a message.

Where no message tells when it was parked, its age runs from when the watch
first saw it (parkinglot_oldest_parked_age_lower_bound says so); the state
file (--state-file; by default one per broker and vhosts under
$XDG_STATE_HOME/parkinglot) keeps those times across a restart.`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Queues = args
			switch {
			case opts.NoDiscover && len(args) == 0:
				return usagef("watch: --no-discover needs the QUEUEs to watch")
			case !listenAddr(opts.Listen):
				return usagef("watch: --listen %q: want HOST:PORT or :PORT", opts.Listen)
			// Faster would poll the management API without a pause.
			case opts.Interval < time.Second:
				return usagef("watch: --interval must be at least 1s, not %s", opts.Interval)
			case opts.ScanInterval < time.Second:
				return usagef("watch: --scan-interval must be at least 1s, not %s", opts.ScanInterval)
			case opts.ScanInterval < opts.Interval:
				return usagef("watch: --scan-interval (%s) must be at least --interval (%s)", opts.ScanInterval, opts.Interval)
			case opts.TopGroups < 1:
				return usagef("watch: --top-groups must be at least 1")
			}
			for _, v := range opts.Vhosts {
				if v == "" {
					return usagef("watch: --vhost needs a name (/ for the default vhost)")
				}
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return watchRun(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Listen, "listen", DefaultWatchListen, "serve /metrics, /livez and /readyz on ADDR (:9188 for every interface)")
	fl.DurationVar(&opts.Interval, "interval", watch.DefaultInterval, "how often depth and the oldest age are read")
	fl.DurationVar(&opts.ScanInterval, "scan-interval", watch.DefaultScanInterval, "how often the error groups are counted (a browse pass; parking lots over 100,000 messages every 6th time)")
	fl.IntVar(&opts.TopGroups, "top-groups", watch.DefaultTopGroups, "error groups exported per parking lot; the rest are summed as \"other\"")
	fl.BoolVar(&opts.NoDiscover, "no-discover", false, "watch only the QUEUEs named, not the parking lots found")
	fl.StringArrayVar(&opts.Vhosts, "vhost", nil, "vhost to watch (repeatable; default: the connection's)")
	fl.Func("state-file", "keep the first-seen ages across restarts in `PATH` (\"\": none; default: one per broker and vhosts under $XDG_STATE_HOME/parkinglot)", func(v string) error {
		opts.StateFile, opts.stateSet = v, true
		return nil
	})
	return cmd
}

func watchRun(ctx context.Context, opts *WatchOptions) error {
	ln, err := net.Listen("tcp", opts.Listen)
	if err != nil {
		return fmt.Errorf("watch: --listen %s: %w", opts.Listen, err)
	}
	state := opts.StateFile
	if !opts.stateSet {
		state = defaultWatchState(opts.Conn.URL, opts.Vhosts, opts.Queues)
	}
	w := watch.New(watch.Options{
		StateFile:    state,
		Vhosts:       opts.Vhosts,
		Queues:       opts.Queues,
		Interval:     opts.Interval,
		ScanInterval: opts.ScanInterval,
		TopGroups:    opts.TopGroups,
		NoDiscover:   opts.NoDiscover,
		Open:         opts.openVhost,
		Log:          opts.Log,
	})
	reg := prometheus.NewRegistry()
	reg.MustRegister(watch.NewCollector(w), collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	srv := &http.Server{Handler: watch.NewHandler(w, reg), ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	opts.Log.Info("watch: serving", "metrics", "http://"+ln.Addr().String()+"/metrics", "connection", broker.Redact(opts.Conn.URL))
	if opts.OnListen != nil {
		opts.OnListen(ln.Addr().String())
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ran := make(chan struct{})
	go func() {
		defer close(ran)
		_ = w.Run(wctx)
	}()
	select {
	case <-ctx.Done():
	case err = <-served:
	}
	cancel()
	<-ran
	sctx, scancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer scancel()
	_ = srv.Shutdown(sctx)
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("watch: serving %s: %w", opts.Listen, err)
	}
	return nil
}

// openVhost opens a session on vhost ("" the connection's own).
func (opts *WatchOptions) openVhost(ctx context.Context, vhost string) (*replay.Session, error) {
	if vhost == "" {
		return opts.engineSession(ctx, "watch")
	}
	f := *opts.Factory
	f.Conn = connWithVhost(opts.Conn, vhost)
	return f.engineSession(ctx, "watch "+vhost)
}

// listenAddr reports whether s reads as an address to listen on; whether
// it can be listened on (a port in use) is only known by trying.
func listenAddr(s string) bool {
	_, port, err := net.SplitHostPort(s)
	return err == nil && port != ""
}

// defaultWatchState is the state file of a watch of this broker (its URL
// without credentials), vhosts and queues: two watches of different
// brokers on one machine keep apart.
func defaultWatchState(url string, vhosts, queues []string) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%q\x00%q", broker.Redact(url), vhosts, queues)
	return replay.StatePath(fmt.Sprintf("watch-%x.json", h.Sum(nil)[:6]))
}
