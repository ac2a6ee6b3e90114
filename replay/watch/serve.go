package watch

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// NewHandler serves the watch: /metrics from g (which holds the watch's
// Collector), /livez (200 while the process serves) and /readyz (200 when
// the watch is ready, else 503 with the reason, one line).
func NewHandler(w *Watcher, g prometheus.Gatherer) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(g, promhttp.HandlerOpts{}))
	mux.HandleFunc("/livez", func(rw http.ResponseWriter, _ *http.Request) {
		rw.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = rw.Write([]byte("ok\n"))
	})
	mux.HandleFunc("/readyz", func(rw http.ResponseWriter, _ *http.Request) {
		rw.Header().Set("Content-Type", "text/plain; charset=utf-8")
		h := w.Health()
		if !h.Ready {
			rw.WriteHeader(http.StatusServiceUnavailable)
			_, _ = rw.Write([]byte("not ready: " + h.Why + "\n"))
			return
		}
		_, _ = rw.Write([]byte("ready\n"))
	})
	return mux
}
