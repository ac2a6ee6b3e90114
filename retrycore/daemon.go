package retrycore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/parkinglot/parkinglot/broker"
)

// DaemonOptions are the `parkinglot daemon` command's inputs.
type DaemonOptions struct {
	Pipeline Pipeline
	// Exec is the handler command (argv, no shell); HTTP the handler URL.
	// Exactly one is set.
	Exec []string
	HTTP string
	// MetricsAddr, when set, serves Prometheus metrics at /metrics.
	MetricsAddr string

	Broker     broker.Options
	Management *broker.Management // optional
	Logger     *slog.Logger
	// HandlerStdout receives the exec handler's stdout (nil: discarded).
	HandlerStdout io.Writer
	// OnMetrics, when set, is called with the metrics listener's address
	// once it listens (tests pass ":0").
	OnMetrics func(addr string)
}

// RunDaemon builds the handler (failing at once if the exec command
// cannot run), serves the metrics and runs the consumer loop until ctx is
// cancelled. It returns nil after a clean shutdown.
func RunDaemon(ctx context.Context, o DaemonOptions) error {
	log := o.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	var h Handler
	switch {
	case len(o.Exec) > 0 && o.HTTP != "":
		return errors.New("give either an exec command or an HTTP URL, not both")
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
	default:
		return errors.New("no handler: give an exec command or an HTTP URL")
	}

	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	metrics := NewMetrics(reg)
	stopMetrics := func() {}
	if o.MetricsAddr != "" {
		stop, addr, err := serveMetrics(reg, o.MetricsAddr, log)
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
		Pipeline:   o.Pipeline,
		Broker:     o.Broker,
		Management: o.Management,
		Logger:     log,
		Metrics:    metrics,
	}, h)
}

// serveMetrics listens first, so a busy or bad address fails start-up,
// then serves /metrics until the returned stop is called.
func serveMetrics(reg *prometheus.Registry, addr string, log *slog.Logger) (func(), string, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, "", fmt.Errorf("--metrics-addr %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}))
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
