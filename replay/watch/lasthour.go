package watch

import (
	"context"
	"time"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/replay"
)

// ArrivalsWindow is the span the dashboard counts new arrivals over.
const ArrivalsWindow = time.Hour

// ArrivalsLastHour counts, for each parking lot whose arrivals the watch
// read (Snapshot.ArrivalsKnown), the messages published into it in the
// last hour: its Snapshot.Arrivals (the broker's message_stats.publish,
// the counter the watch exports) less the management API's sample of that
// counter from an hour before (one sample a minute: the window is 60 to 61
// minutes). A parking lot is missing from the answer when the broker
// counts no arrivals into it (one filled by dead-lettering alone, or
// statistics disabled), when its samples do not reach back an hour (a
// sample retention policy shorter than RabbitMQ's default), or when the
// counter restarted meanwhile (its node restarted). s is the session of
// the snapshots' vhost; the reads are the management API's alone.
func ArrivalsLastHour(ctx context.Context, s *replay.Session, lots []Snapshot, now time.Time) map[string]int64 {
	out := map[string]int64{}
	var m *broker.Management
	for _, sn := range lots {
		if !sn.Found || !sn.ArrivalsKnown || ctx.Err() != nil {
			continue
		}
		if m == nil {
			var err error
			if m, err = s.Management(ctx); err != nil {
				return out
			}
		}
		samples, err := m.QueuePublishSamples(ctx, sn.Queue, ArrivalsWindow, time.Minute)
		if err != nil {
			continue
		}
		// The samples count the watch's own refreshes: so does the total
		// they are taken from, less those of the window.
		since := now.Add(-ArrivalsWindow)
		if n, ok := arrivalsSince(sn.Arrivals+sn.Republished, samples, since); ok {
			out[sn.Queue] = max(n-sn.republishedSince(since), 0)
		}
	}
	return out
}

// arrivalsSince is total less the newest sample taken at or before since;
// ok is false when no sample is that old or the counter went down (it
// restarted).
func arrivalsSince(total int64, samples []broker.PublishSample, since time.Time) (int64, bool) {
	var base *broker.PublishSample
	for i := range samples {
		s := &samples[i]
		if !s.At.After(since) && (base == nil || s.At.After(base.At)) {
			base = s
		}
	}
	if base == nil || base.Count > total {
		return 0, false
	}
	return total - base.Count, true
}

// republishedSince counts the watch's own refreshes after since.
func (s Snapshot) republishedSince(since time.Time) int64 {
	var n int64
	for _, a := range s.republishedLog {
		if a.at.After(since) {
			n += a.n
		}
	}
	return n
}
