package daemon

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/retrycore"
)

// ServeOptions are the `parkinglot daemon` command's inputs.
type ServeOptions struct {
	Pipeline retrycore.Pipeline
	// Exec is the handler command (argv, no shell); HTTP the handler URL.
	// Exactly one is set.
	Exec []string
	HTTP string
	// MetricsAddr, when set, serves Prometheus metrics at /metrics.
	MetricsAddr string

	Broker     broker.Options
	Management *broker.Management // optional
	// ManagementCheck is the check Management passed (RunOptions).
	ManagementCheck *broker.ManagementCheck
	Logger          *slog.Logger
	// HandlerStdout receives the exec handler's stdout (nil: discarded).
	HandlerStdout io.Writer
	// Collectors are registered beside the daemon's own metrics (the CLI
	// adds the parking lot's depth and oldest age, read by the watch).
	Collectors []prometheus.Collector
	// OnMetrics, when set, is called with the metrics listener's address
	// once it listens (tests pass ":0").
	OnMetrics func(addr string)
}

// The daemon runs exactly one handler: an exec command or an HTTP URL.
var (
	ErrNoHandler   = errors.New("no handler: give an exec command or an HTTP URL")
	ErrTwoHandlers = errors.New("give either an exec command or an HTTP URL, not both")
)

// CheckHandler is the one-handler rule: nil when exactly one of argv and
// url is set, else ErrNoHandler or ErrTwoHandlers.
func CheckHandler(argv []string, url string) error {
	switch {
	case len(argv) > 0 && url != "":
		return ErrTwoHandlers
	case len(argv) == 0 && url == "":
		return ErrNoHandler
	}
	return nil
}

// Serve builds the handler (failing at once if the exec command
// cannot run), serves the metrics and runs the consumer loop until ctx is
// cancelled. It returns nil after a clean shutdown.
func Serve(ctx context.Context, o ServeOptions) error {
	log := o.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if err := CheckHandler(o.Exec, o.HTTP); err != nil {
		return err
	}
	var h Handler
	switch {
	case len(o.Exec) > 0:
		eh, err := NewExecHandler(o.Exec, ExecOptions{Stdout: o.HandlerStdout})
		if err != nil {
			return err
		}
		h = eh
	case o.HTTP != "":
		hh, err := NewHTTPHandler(o.HTTP, nil)
		if err != nil {
			return err
		}
		h = hh
	}

	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	reg.MustRegister(o.Collectors...)
	metrics := NewMetrics(reg)
	// Ready while consuming: from each session's start until it stops, and
	// never again once ctx ends (the drain).
	var consuming atomic.Bool
	ready := func() bool { return consuming.Load() && ctx.Err() == nil }
	stopMetrics := func() {}
	if o.MetricsAddr != "" {
		stop, addr, err := serveMetrics(reg, o.MetricsAddr, ready, log)
		if err != nil {
			return err
		}
		stopMetrics = stop
		log.Info("serving metrics", "addr", "http://"+addr+"/metrics")
		if o.OnMetrics != nil {
			o.OnMetrics(addr)
		}
	}
	defer stopMetrics()

	return Run(ctx, RunOptions{
		Pipeline:        o.Pipeline,
		Broker:          o.Broker,
		Management:      o.Management,
		ManagementCheck: o.ManagementCheck,
		Logger:          log,
		Metrics:         metrics,
		OnConsuming:     func(int) { consuming.Store(true) },
		OnStopped:       func() { consuming.Store(false) },
	}, h)
}

// MetricsListenError: the metrics address could not be listened on (busy,
// bad or not allowed); the daemon did not start.
type MetricsListenError struct {
	Addr string
	Err  error
}

func (e *MetricsListenError) Error() string {
	return "metrics address " + e.Addr + ": " + e.Err.Error()
}
func (e *MetricsListenError) Unwrap() error { return e.Err }

// serveMetrics listens first, so a busy or bad address fails start-up,
// then serves /metrics, /livez (200 while the process serves) and /readyz
// (200 while ready says so, else 503) until the returned stop is called.
func serveMetrics(reg *prometheus.Registry, addr string, ready func() bool, log *slog.Logger) (func(), string, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, "", &MetricsListenError{Addr: addr, Err: err}
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}))
	mux.HandleFunc("/livez", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if !ready() {
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte("not ready: not consuming\n"))
			return
		}
		_, _ = w.Write([]byte("ready\n"))
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("metrics server stopped", "err", err)
		}
	}()
	stop := func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		<-done
	}
	return stop, ln.Addr().String(), nil
}
