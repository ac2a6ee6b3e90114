package daemon

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Outcome labels of parkinglot_messages_total.
const (
	OutcomeLabelDone          = "done"
	OutcomeLabelRetried       = "retried"
	OutcomeLabelParked        = "parked"
	OutcomeLabelRequeued      = "requeued"       // given back untouched (shutdown, lost connection)
	OutcomeLabelPublishFailed = "publish_failed" // retry/park copy not confirmed: original requeued
)

// Metrics are the consumer loop's Prometheus metrics. A nil *Metrics
// records nothing, so tests and library users need not register any.
type Metrics struct {
	messages   *prometheus.CounterVec
	duration   prometheus.Histogram
	inFlight   prometheus.Gauge
	reconnects prometheus.Counter
}

// NewMetrics creates the metrics and registers them with reg (for example
// a prometheus.NewRegistry served by promhttp.HandlerFor). Registering the
// same names twice on one registry panics in client_golang, so each Run
// that shares a registry should share one *Metrics.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		messages: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "parkinglot_messages_total",
			Help: "Messages handled by the consumer loop, by outcome: done, retried, parked, requeued, publish_failed.",
		}, []string{"outcome"}),
		duration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "parkinglot_handler_duration_seconds",
			Help:    "Time the handler took per message, timeouts included.",
			Buckets: prometheus.ExponentialBuckets(0.001, 4, 10), // 1ms … ~4.4min
		}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "parkinglot_in_flight",
			Help: "Messages being handled or having their retry/park copy confirmed.",
		}),
		reconnects: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "parkinglot_reconnects_total",
			Help: "Times the consumer loop re-dialled the broker after losing a connection.",
		}),
	}
	for _, o := range []string{OutcomeLabelDone, OutcomeLabelRetried, OutcomeLabelParked, OutcomeLabelRequeued, OutcomeLabelPublishFailed} {
		m.messages.WithLabelValues(o) // every outcome shows from the start, at 0
	}
	if reg != nil {
		reg.MustRegister(m.messages, m.duration, m.inFlight, m.reconnects)
	}
	return m
}

func (m *Metrics) outcome(label string) {
	if m != nil {
		m.messages.WithLabelValues(label).Inc()
	}
}

func (m *Metrics) observe(d time.Duration) {
	if m != nil {
		m.duration.Observe(d.Seconds())
	}
}

func (m *Metrics) inFlightAdd(n float64) {
	if m != nil {
		m.inFlight.Add(n)
	}
}

func (m *Metrics) reconnected() {
	if m != nil {
		m.reconnects.Inc()
	}
}
