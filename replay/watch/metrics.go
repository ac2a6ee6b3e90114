package watch

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// The metric names: a contract with the alert rules (ui/alerting) and with
// the dashboards built on them, so never renamed.
const (
	MetricParked    = "parkinglot_parked_messages"
	MetricOldestAge = "parkinglot_oldest_parked_age_seconds"
	MetricByError   = "parkinglot_parked_messages_by_error"
	MetricGroupAge  = "parkinglot_error_group_oldest_parked_timestamp_seconds"
	MetricArrivals  = "parkinglot_parked_arrivals_total"
	MetricLastRead  = "parkinglot_watch_last_read_timestamp_seconds"
	MetricLastScan  = "parkinglot_watch_last_scan_timestamp_seconds"
	MetricErrors    = "parkinglot_watch_errors_total"
	MetricReady     = "parkinglot_watch_ready"
	MetricLimit     = "parkinglot_delivery_limit"
	MetricAgeBound  = "parkinglot_oldest_parked_age_lower_bound"
	labelVhost      = "vhost"
	labelQueue      = "queue"
	labelErrorGroup = "error_group"
	labelErrorKind  = "kind"
)

var (
	descParked    = prometheus.NewDesc(MetricParked, "Messages in the parking lot (its depth), as last read.", []string{labelVhost, labelQueue}, nil)
	descOldestAge = prometheus.NewDesc(MetricOldestAge, "Seconds since the oldest message of the parking lot was parked (its death time or parked header; where it has neither, or the watch cannot read it harmlessly, since the watch first saw it); 0 when empty.", []string{labelVhost, labelQueue}, nil)
	descByError   = prometheus.NewDesc(MetricByError, "Messages of the parking lot by normalised error group at the last scan: the top groups, the rest as \"other\".", []string{labelVhost, labelQueue, labelErrorGroup}, nil)
	descGroupAge  = prometheus.NewDesc(MetricGroupAge, "Unix time the oldest message of the error group was parked (its parked header, a framework's failure time or its death time), at the last scan: the top groups, where a message tells.", []string{labelVhost, labelQueue, labelErrorGroup}, nil)
	descArrivals  = prometheus.NewDesc(MetricArrivals, "Messages published into the parking lot, as the broker's statistics count them (message_stats.publish; dead-lettering by the broker is not counted), less the watch's own refreshes of messages near a delivery limit.", []string{labelVhost, labelQueue}, nil)
	descLastRead  = prometheus.NewDesc(MetricLastRead, "Unix time of the last successful read of the parking lot's depth and head.", []string{labelVhost, labelQueue}, nil)
	descLastScan  = prometheus.NewDesc(MetricLastScan, "Unix time of the parking lot's last error-group scan.", []string{labelVhost, labelQueue}, nil)
	descErrors    = prometheus.NewDesc(MetricErrors, "Errors of the watch, by kind: connect, depth, head, scan, discover.", []string{labelErrorKind}, nil)
	descLimit     = prometheus.NewDesc(MetricLimit, "The parking lot's effective delivery limit (a quorum queue's argument, policy or the broker's default), -1 when unlimited: a lost connection of whoever holds a message counts toward a finite one, and RabbitMQ 4.3 carries the count of a message the limit parked into the lot.", []string{labelVhost, labelQueue}, nil)
	descAgeBound  = prometheus.NewDesc(MetricAgeBound, "1 when the parking lot's oldest age is only a lower bound: no message tells when it was parked, so the age runs from when the watch (or, through its state file, an earlier run of it) first saw the message; 0 when a message tells.", []string{labelVhost, labelQueue}, nil)
	descReady     = prometheus.NewDesc(MetricReady, "1 when the watch is connected and found every parking lot, else 0.", nil, nil)
)

// Collector exports a Watcher's last values; a scrape reads no broker.
type Collector struct {
	w *Watcher
	// parkedOnly exports the depth and the oldest age alone (the daemon's
	// own parking lot).
	parkedOnly bool
	now        func() time.Time
}

// NewCollector exports every metric of the watch.
func NewCollector(w *Watcher) *Collector { return &Collector{w: w, now: w.o.Now} }

// NewParkedCollector exports only parkinglot_parked_messages and
// parkinglot_oldest_parked_age_seconds (the daemon's).
func NewParkedCollector(w *Watcher) *Collector {
	return &Collector{w: w, parkedOnly: true, now: w.o.Now}
}

// Describe implements prometheus.Collector.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	ch <- descParked
	ch <- descOldestAge
	if c.parkedOnly {
		return
	}
	for _, d := range []*prometheus.Desc{descByError, descGroupAge, descArrivals, descLastRead, descLastScan, descErrors, descReady, descLimit, descAgeBound} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	now := c.now()
	for _, s := range c.w.Snapshots() {
		if !s.Found || s.LastRead.IsZero() {
			continue
		}
		ch <- prometheus.MustNewConstMetric(descParked, prometheus.GaugeValue, float64(s.Depth), s.Vhost, s.Queue)
		ch <- prometheus.MustNewConstMetric(descOldestAge, prometheus.GaugeValue, s.OldestAge(now).Seconds(), s.Vhost, s.Queue)
		if c.parkedOnly {
			continue
		}
		for _, g := range s.TopGroups {
			// The group comes from message headers: a label the client
			// refuses (GroupKey makes it valid UTF-8) drops that series,
			// never the process.
			if m, err := prometheus.NewConstMetric(descByError, prometheus.GaugeValue, float64(g.Count), s.Vhost, s.Queue, g.Group); err == nil {
				ch <- m
			}
			if g.OldestParkedAt.IsZero() {
				continue
			}
			if m, err := prometheus.NewConstMetric(descGroupAge, prometheus.GaugeValue, unix(g.OldestParkedAt), s.Vhost, s.Queue, g.Group); err == nil {
				ch <- m
			}
		}
		if s.ArrivalsKnown {
			ch <- prometheus.MustNewConstMetric(descArrivals, prometheus.CounterValue, float64(s.Arrivals), s.Vhost, s.Queue)
		}
		if s.Depth > 0 && s.Source != AgeNone {
			ch <- prometheus.MustNewConstMetric(descAgeBound, prometheus.GaugeValue, boolValue(s.Source != AgeHeader), s.Vhost, s.Queue)
		}
		if s.LimitKnown {
			ch <- prometheus.MustNewConstMetric(descLimit, prometheus.GaugeValue, float64(s.DeliveryLimit), s.Vhost, s.Queue)
		}
		ch <- prometheus.MustNewConstMetric(descLastRead, prometheus.GaugeValue, unix(s.LastRead), s.Vhost, s.Queue)
		if !s.LastScan.IsZero() {
			ch <- prometheus.MustNewConstMetric(descLastScan, prometheus.GaugeValue, unix(s.LastScan), s.Vhost, s.Queue)
		}
	}
	if c.parkedOnly {
		return
	}
	h := c.w.Health()
	for _, k := range ErrorKinds {
		ch <- prometheus.MustNewConstMetric(descErrors, prometheus.CounterValue, float64(h.Errors[k]), string(k))
	}
	ready := 0.0
	if h.Ready {
		ready = 1
	}
	ch <- prometheus.MustNewConstMetric(descReady, prometheus.GaugeValue, ready)
}

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func unix(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }
