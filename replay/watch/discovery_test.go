//go:build integration

package watch_test

import (
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker/brokertest"
	"github.com/parkinglot/parkinglot/replay"
	"github.com/parkinglot/parkinglot/replay/watch"
)

// The watch's discovery of parking lots: what it watches when the listing
// fails, and while a lot exists.

// TestWatchWhoseListingKeepsFailingIsNotReady: a watch that cannot list the
// parking lots for two minutes after its last listing (the management API
// gone) says it is not ready, and why: a parking lot made meanwhile would
// go unwatched. It still reads the ones it knows, and is ready again once
// a listing answers.
func TestWatchWhoseListingKeepsFailingIsNotReady(t *testing.T) {
	ch := brokertest.Channel(t)
	lot, _ := fiveParked(t, ch, "unlisted.dlq")
	mu, err := url.Parse(brokertest.ManagementURL())
	if err != nil {
		t.Fatal(err)
	}
	mgmt := newTCPProxy(t, mu.Host)
	var skew atomic.Int64 // the watch's clock runs this far ahead
	w := startWatchOn(t, replay.Connection{URL: brokertest.URL(), ManagementURL: mgmt.viaProxy(brokertest.ManagementURL()), Vhost: "/"},
		watch.Options{Queues: []string{lot}, Interval: time.Second, ScanInterval: time.Hour, TopGroups: -1,
			Now: func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }})
	readyz := func() (int, string) { return get(w.base + "/readyz") }
	brokertest.Eventually(t, 30*time.Second, 100*time.Millisecond, func() bool { c, _ := readyz(); return c == http.StatusOK },
		func() string { _, b := readyz(); return "not ready with the management API up: " + b })

	mgmt.stop()
	skew.Store(int64(3 * time.Minute)) // the last listing is three minutes old
	var body string
	brokertest.Eventually(t, 30*time.Second, 100*time.Millisecond, func() bool {
		var c int
		c, body = readyz()
		return c == http.StatusServiceUnavailable
	}, func() string { return "still ready three minutes after the last listing: " + body })
	if !strings.Contains(body, "the parking lots were last listed 3m") || !strings.Contains(body, "a new one would not be watched") {
		t.Errorf("/readyz says %q, want when they were last listed and what that means", body)
	}
	labels := map[string]string{"vhost": "/", "queue": lot}
	m := scrape(t, w.base)
	if r, _ := m.value(watch.MetricReady, nil); r != 0 {
		t.Errorf("%s %v, want 0", watch.MetricReady, r)
	}
	if e, _ := m.value(watch.MetricErrors, map[string]string{"kind": "discover"}); e < 1 {
		t.Errorf("%s{kind=discover} %v, want the failed listings counted", watch.MetricErrors, e)
	}
	from, _ := m.value("parkinglot_watch_last_read_timestamp_seconds", labels)
	brokertest.Eventually(t, 30*time.Second, 100*time.Millisecond, func() bool {
		m = scrape(t, w.base)
		last, _ := m.value("parkinglot_watch_last_read_timestamp_seconds", labels)
		return last > from
	}, func() string { return "the parking lot it knows is no longer read" })
	if d, _ := m.value("parkinglot_parked_messages", labels); d != 5 {
		t.Errorf("depth %v, want 5", d)
	}

	mgmt.start()
	brokertest.Eventually(t, 30*time.Second, 100*time.Millisecond, func() bool { c, _ := readyz(); return c == http.StatusOK },
		func() string { _, b := readyz(); return "not ready again once the listing answers: " + b })
}

// TestWatchKeepsALotWhileItExists: a dead-letter target (no parking-lot
// name) is watched; when nothing dead-letters into it any more (or a
// route lookup failed) it stays watched while it exists, so its series
// and alerts do not vanish and come back; deleted, it is dropped.
func TestWatchKeepsALotWhileItExists(t *testing.T) {
	ch := brokertest.Channel(t)
	target := brokertest.Name(t, "held")
	brokertest.DeclareQueue(t, ch, target, nil)
	src := brokertest.Name(t, "work")
	brokertest.DeclareQueue(t, ch, src, amqp.Table{"x-dead-letter-exchange": "", "x-dead-letter-routing-key": target})
	brokertest.Publish(t, ch, "", target, parked("k-1", "ledger down", time.Now()))
	var skew atomic.Int64
	w := startWatch(t, "", watch.Options{Interval: time.Second, ScanInterval: time.Hour, TopGroups: -1,
		Now: func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }})
	depthOf := func(q string) (float64, bool) {
		return scrape(t, w.base).value("parkinglot_parked_messages", map[string]string{"vhost": "/", "queue": q})
	}
	brokertest.Eventually(t, 30*time.Second, 100*time.Millisecond, func() bool { d, ok := depthOf(target); return ok && d == 1 },
		func() string { return target + ", a dead-letter target, is not watched" })

	if _, err := ch.QueueDelete(src, false, false, false); err != nil {
		t.Fatal(err)
	}
	later := brokertest.Name(t, "later.dlq") // seen: the listing after the delete ran
	brokertest.DeclareQueue(t, ch, later, nil)
	skew.Store(int64(2 * time.Minute))
	brokertest.Eventually(t, 30*time.Second, 100*time.Millisecond, func() bool { _, ok := depthOf(later); return ok },
		func() string { return "no listing found " + later })
	if d, ok := depthOf(target); !ok || d != 1 {
		t.Errorf("%s, no longer a dead-letter target but still there: depth %v (exported %v), want 1", target, d, ok)
	}

	if _, err := ch.QueueDelete(target, false, false, false); err != nil {
		t.Fatal(err)
	}
	skew.Store(int64(4 * time.Minute))
	brokertest.Eventually(t, 30*time.Second, 100*time.Millisecond, func() bool { _, ok := depthOf(target); return !ok },
		func() string { return target + " deleted is still exported" })
}
