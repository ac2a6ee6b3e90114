//go:build integration

package watch_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/broker/brokertest"
	"github.com/parkinglot/parkinglot/replay"
	"github.com/parkinglot/parkinglot/replay/watch"
	"github.com/parkinglot/parkinglot/retrycore"
)

// parked is a message as a parking lot holds it: parked at `at`, with
// its error (none when errText is empty).
func parked(id, errText string, at time.Time) amqp.Publishing {
	h := amqp.Table{retrycore.HeaderParkedAt: at}
	if errText != "" {
		h[retrycore.HeaderLastError] = errText
	}
	return amqp.Publishing{MessageId: id, Body: []byte(`{"id":"` + id + `"}`), ContentType: "application/json",
		DeliveryMode: amqp.Persistent, Headers: h}
}

func ids(ds []amqp.Delivery) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.MessageId
	}
	return out
}

// TestWatchServesParkingLotsOverHTTP: a watch served as `parkinglot
// watch` serves it, scraped over HTTP, exports each parking lot's depth,
// the oldest message's age from its parked time, its error groups (top 2 +
// other) and arrivals; /readyz says
// 503 while a queue named is missing and 200 once it exists; nothing is
// taken or reordered.
func TestWatchServesParkingLotsOverHTTP(t *testing.T) {
	v := brokertest.Version(t)
	ch := brokertest.Channel(t)
	classic := brokertest.Name(t, "classic.dlq")
	quorum := brokertest.Name(t, "quorum.dlq")
	later := brokertest.Name(t, "later.dlq")
	brokertest.DeclareQueue(t, ch, classic, nil)
	brokertest.DeclareQueue(t, ch, quorum, amqp.Table{"x-queue-type": "quorum"})
	brokertest.DeleteQueueAtEnd(t, later)

	now := time.Now().Truncate(time.Second)
	twoHours, oneHour := now.Add(-2*time.Hour), now.Add(-time.Hour)
	msgs := []amqp.Publishing{parked("c-00", "ledger down (request 1)", twoHours)}
	for i := 1; i <= 4; i++ {
		msgs = append(msgs, parked(fmt.Sprintf("c-t%d", i), fmt.Sprintf("timeout after %d s", 10*i), now))
	}
	for i := 2; i <= 3; i++ {
		msgs = append(msgs, parked(fmt.Sprintf("c-l%d", i), fmt.Sprintf("ledger down (request %d)", i), now))
	}
	msgs = append(msgs, parked("c-b1", "bad amount 5", now), parked("c-b2", "bad amount 7", now), parked("c-n", "", now))
	brokertest.PublishMany(t, ch, "", classic, msgs)
	var qmsgs []amqp.Publishing
	for i := range 3 {
		qmsgs = append(qmsgs, parked(fmt.Sprintf("q-%d", i), fmt.Sprintf("quorum lot broke %d", i), oneHour))
	}
	brokertest.PublishMany(t, ch, "", quorum, qmsgs)
	started := time.Now()

	w := startWatch(t, "", watch.Options{Queues: []string{classic, quorum, later}, NoDiscover: true, Interval: time.Second, ScanInterval: time.Second, TopGroups: 2})
	lot := func(q string) map[string]string { return map[string]string{"vhost": "/", "queue": q} }
	var m metrics
	brokertest.Eventually(t, 30*time.Second, 200*time.Millisecond, func() bool {
		m = scrape(t, w.base)
		_, scanned := m.value("parkinglot_watch_last_scan_timestamp_seconds", lot(classic))
		arrivals, _ := m.value("parkinglot_parked_arrivals_total", lot(classic))
		qDepth, _ := m.value("parkinglot_parked_messages", lot(quorum))
		// The scans run one lot at a time: the quorum lot's is awaited too.
		_, qScanned := m.value("parkinglot_watch_last_scan_timestamp_seconds", lot(quorum))
		return scanned && arrivals == 10 && qDepth == 3 && qScanned
	}, func() string {
		return fmt.Sprintf("no scan of %s (or of %s), or its arrivals and the quorum depth not counted yet: %v", classic, quorum, m)
	})

	if d, _ := m.value("parkinglot_parked_messages", lot(classic)); d != 10 {
		t.Errorf("%s depth %v, want 10", classic, d)
	}
	wantAge := time.Since(twoHours).Seconds()
	if a, _ := m.value("parkinglot_oldest_parked_age_seconds", lot(classic)); a < wantAge-3 || a > wantAge+3 {
		t.Errorf("%s oldest age %.0f s, want the head's parked time, %.0f s ago", classic, a, wantAge)
	}
	groups := m.series("parkinglot_parked_messages_by_error", lot(classic), "error_group")
	want := map[string]float64{
		retrycore.GroupKey("timeout after 10 s"):      4,
		retrycore.GroupKey("ledger down (request 1)"): 3,
		"other": 3, // two "bad amount", one without an error
	}
	if fmt.Sprint(groups) != fmt.Sprint(want) {
		t.Errorf("%s groups %v, want %v", classic, groups, want)
	}
	// Each top group's oldest parked time, from its messages; none for
	// "other".
	groupAge := m.series("parkinglot_error_group_oldest_parked_timestamp_seconds", lot(classic), "error_group")
	wantGroupAge := map[string]float64{
		retrycore.GroupKey("timeout after 10 s"):      float64(now.Unix()),
		retrycore.GroupKey("ledger down (request 1)"): float64(twoHours.Unix()),
	}
	if fmt.Sprint(groupAge) != fmt.Sprint(wantGroupAge) {
		t.Errorf("%s groups' oldest parked times %v, want %v", classic, groupAge, wantGroupAge)
	}
	for _, name := range []string{"parkinglot_watch_last_read_timestamp_seconds", "parkinglot_watch_last_scan_timestamp_seconds"} {
		ts, _ := m.value(name, lot(classic))
		if at := time.Unix(int64(ts), 0); at.Before(started.Add(-time.Second)) || at.After(time.Now().Add(time.Second)) {
			t.Errorf("%s of %s: %v, want since the watch started (%v)", name, classic, at, started)
		}
	}

	// The delivery limit each lot applies: none on a classic queue, the
	// broker's default on a quorum one (20 from 4.0, none on 3.x).
	wantLimit := map[string]float64{classic: -1, quorum: -1}
	if v.AtLeast(4, 0, 0) {
		wantLimit[quorum] = 20
	}
	for q, want := range wantLimit {
		if l, ok := m.value("parkinglot_delivery_limit", lot(q)); !ok || l != want {
			t.Errorf("%s delivery limit %v (exported %v), want %v", q, l, ok, want)
		}
	}

	qAge, _ := m.value("parkinglot_oldest_parked_age_seconds", lot(quorum))
	qGroups := m.series("parkinglot_parked_messages_by_error", lot(quorum), "error_group")
	// Read on every version (before 4.3 a scan counts one delivery, far
	// from the limit).
	wantAge = time.Since(oneHour).Seconds()
	if qAge < wantAge-3 || qAge > wantAge+3 {
		t.Errorf("RabbitMQ %s, %s oldest age %.0f s, want the oldest message's parked time, %.0f s ago", v, quorum, qAge, wantAge)
	}
	if fmt.Sprint(qGroups) != fmt.Sprint(map[string]float64{retrycore.GroupKey("quorum lot broke 0"): 3}) {
		t.Errorf("RabbitMQ %s, %s groups %v, want the 3 in one group", v, quorum, qGroups)
	}

	code, body := get(w.base + "/readyz")
	if code != http.StatusServiceUnavailable || !strings.Contains(body, later) {
		t.Errorf("/readyz with %s missing: %d %q, want 503 naming it", later, code, body)
	}
	if r, _ := m.value("parkinglot_watch_ready", nil); r != 0 {
		t.Errorf("parkinglot_watch_ready %v with %s missing, want 0", r, later)
	}
	if _, ok := m.value("parkinglot_parked_messages", lot(later)); ok {
		t.Errorf("%s exported before it exists", later)
	}

	brokertest.DeclareQueue(t, ch, later, nil)
	brokertest.Eventually(t, 30*time.Second, 200*time.Millisecond, func() bool {
		code, _ := get(w.base + "/readyz")
		return code == http.StatusOK
	}, func() string { _, b := get(w.base + "/readyz"); return "/readyz once every queue exists: " + b })
	m = scrape(t, w.base)
	if r, _ := m.value("parkinglot_watch_ready", nil); r != 1 {
		t.Errorf("parkinglot_watch_ready %v when ready, want 1", r)
	}
	if d, ok := m.value("parkinglot_parked_messages", lot(later)); !ok || d != 0 {
		t.Errorf("%s depth %v (%v), want 0", later, d, ok)
	}
	if a, ok := m.value("parkinglot_oldest_parked_age_seconds", lot(later)); !ok || a != 0 {
		t.Errorf("%s oldest age %v (%v), want 0 when empty", later, a, ok)
	}
	for _, k := range []string{"connect", "depth", "head", "scan", "discover"} {
		if n, ok := m.value("parkinglot_watch_errors_total", map[string]string{"kind": k}); !ok || n != 0 {
			t.Errorf("parkinglot_watch_errors_total{kind=%q} %v (%v), want 0", k, n, ok)
		}
	}

	w.stop(t)
	if got, want := ids(brokertest.Drain(t, ch, classic)), ids(toDeliveries(msgs)); !slices.Equal(got, want) {
		t.Errorf("%s after the watch: %v, want %v (nothing taken, the order kept)", classic, got, want)
	}
	if got, want := ids(brokertest.Drain(t, ch, quorum)), ids(toDeliveries(qmsgs)); !slices.Equal(got, want) {
		t.Errorf("%s after the watch: %v, want %v (nothing taken, the order kept)", quorum, got, want)
	}
}

func toDeliveries(ps []amqp.Publishing) []amqp.Delivery {
	out := make([]amqp.Delivery, len(ps))
	for i, p := range ps {
		out[i] = amqp.Delivery{MessageId: p.MessageId}
	}
	return out
}

// TestWatchLosingTheBrokerKeepsServing: with its AMQP connection cut (a
// proxy stopped), the watch keeps serving the last values, says not
// ready, and is ready again once the broker answers; the messages stay.
func TestWatchLosingTheBrokerKeepsServing(t *testing.T) {
	ch := brokertest.Channel(t)
	lot, msgs := fiveParked(t, ch, "lost.dlq")
	amqpURL := brokertest.URL()
	proxy := newTCPProxy(t, hostPort(t, amqpURL))
	w := startWatch(t, proxy.viaProxy(amqpURL), watch.Options{Queues: []string{lot}, NoDiscover: true, Interval: time.Second, ScanInterval: time.Second, TopGroups: watch.DefaultTopGroups})
	labels := map[string]string{"vhost": "/", "queue": lot}
	ready := func() bool { code, _ := get(w.base + "/readyz"); return code == http.StatusOK }
	readyz := func() string { _, b := get(w.base + "/readyz"); return b }
	brokertest.Eventually(t, 30*time.Second, 100*time.Millisecond, ready, func() string { return "not ready at first: " + readyz() })

	proxy.stop()
	brokertest.Eventually(t, 60*time.Second, 100*time.Millisecond, func() bool { return !ready() },
		func() string { return "still ready with the broker gone: " + readyz() })
	m := scrape(t, w.base)
	if d, ok := m.value("parkinglot_parked_messages", labels); !ok || d != 5 {
		t.Errorf("with the broker gone, the depth served is %v (%v), want the last one read, 5", d, ok)
	}
	if r, _ := m.value("parkinglot_watch_ready", nil); r != 0 {
		t.Errorf("parkinglot_watch_ready %v with the broker gone, want 0", r)
	}
	var errs float64
	for _, k := range []string{"connect", "depth", "head"} {
		n, _ := m.value("parkinglot_watch_errors_total", map[string]string{"kind": k})
		errs += n
	}
	if errs == 0 {
		t.Errorf("no connect, depth or head error counted with the broker gone")
	}

	proxy.start()
	brokertest.Eventually(t, 60*time.Second, 100*time.Millisecond, ready, func() string { return "not ready again after the broker came back: " + readyz() })
	w.stop(t)
	if got, want := ids(brokertest.Drain(t, ch, lot)), ids(toDeliveries(msgs)); !slices.Equal(got, want) {
		t.Errorf("%s after the watch: %v, want %v", lot, got, want)
	}
}

func hostPort(t *testing.T, rawURL string) string {
	t.Helper()
	u, err := amqp.ParseURI(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%s:%d", u.Host, u.Port)
}

// watchSoak is how long the delivery-limit test watches its parking lots
// at a 1 s interval and a 1 s scan interval: two minutes, about 120 reads
// and, shared by its two lots, about as many scans — a give-back counted
// toward a limit of 3 or 20 and never refreshed would have dropped every
// message many times over.
const watchSoak = 2 * time.Minute

// TestWatchQuorumDeliveryLimitLosesNothing: quorum parking lots with
// delivery limits 3 and 20, watched together at a 1 s interval and a 1 s
// scan interval, lose nothing and keep their order on every version, and
// their messages are scanned (ages and groups from the messages): on 4.3
// no delivery is counted (x-acquired-count shows the reads); before it
// each scan counts one, and the scans refresh a message one give-back
// from its limit, so no count reaches it, and the watch's own
// re-publishes are not exported as arrivals.
func TestWatchQuorumDeliveryLimitLosesNothing(t *testing.T) {
	v := brokertest.Version(t)
	ch := brokertest.Channel(t)
	limits := []int{3, 20}
	lots := map[int]string{}
	msgs := map[int][]amqp.Publishing{}
	parkedAt := time.Now().Add(-time.Minute).Truncate(time.Second)
	for _, limit := range limits {
		lot := brokertest.Name(t, fmt.Sprintf("limit%d.dlq", limit))
		brokertest.DeclareQueue(t, ch, lot, amqp.Table{"x-queue-type": "quorum", "x-delivery-limit": int32(limit)})
		for i := range 20 {
			msgs[limit] = append(msgs[limit], parked(fmt.Sprintf("q%d-%02d", limit, i), fmt.Sprintf("error %d", i%4), parkedAt.Add(time.Duration(i)*time.Second)))
		}
		brokertest.PublishMany(t, ch, "", lot, msgs[limit])
		lots[limit] = lot
	}

	w := startWatch(t, "", watch.Options{Queues: []string{lots[3], lots[20]}, NoDiscover: true, Interval: time.Second, ScanInterval: time.Second, TopGroups: 3})
	labels := func(limit int) map[string]string { return map[string]string{"vhost": "/", "queue": lots[limit]} }
	reads, scans := map[int]map[float64]bool{}, map[int]map[float64]bool{}
	oldest := map[int]bool{} // the oldest message's age was seen
	for _, limit := range limits {
		reads[limit], scans[limit] = map[float64]bool{}, map[float64]bool{}
	}
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for end := time.Now().Add(watchSoak); time.Now().Before(end); <-tick.C {
		m := scrape(t, w.base)
		for _, limit := range limits {
			if d, ok := m.value("parkinglot_parked_messages", labels(limit)); ok && d != 20 {
				t.Fatalf("limit %d: depth %v while watched, want 20", limit, d)
			}
			// Once read from the messages, the oldest age only grows.
			if a, ok := m.value("parkinglot_oldest_parked_age_seconds", labels(limit)); ok && oldest[limit] && a < time.Since(parkedAt).Seconds()-3 {
				t.Fatalf("limit %d: oldest age %.0f s, want the oldest message's %.0f s (never younger)", limit, a, time.Since(parkedAt).Seconds())
			} else if ok && a >= time.Since(parkedAt).Seconds()-3 {
				oldest[limit] = true
			}
			if r, ok := m.value("parkinglot_watch_last_read_timestamp_seconds", labels(limit)); ok {
				reads[limit][r] = true
			}
			if s, ok := m.value("parkinglot_watch_last_scan_timestamp_seconds", labels(limit)); ok {
				scans[limit][s] = true
			}
		}
	}
	// The broker counts the scans' re-publishes seconds later: the
	// exported arrivals stay the 20 published, whatever it counts.
	mgmt := brokertest.Management(t)
	var raw int64
	brokertest.Eventually(t, 20*time.Second, 500*time.Millisecond, func() bool {
		q, err := mgmt.Queue(context.Background(), lots[3])
		if err != nil || q.MessageStats.Publish == nil {
			return false
		}
		raw = *q.MessageStats.Publish
		a, ok := scrape(t, w.base).value("parkinglot_parked_arrivals_total", labels(3))
		if !ok || a != 20 {
			t.Fatalf("limit 3: exported arrivals %v (%v), want the 20 published (the broker counts %d)", a, ok, raw)
		}
		return raw >= 20 && (!v.NackCountsTowardDeliveryLimit() || raw > 20)
	}, func() string {
		return fmt.Sprintf("RabbitMQ %s: the broker counts %d published into %s, want the watch's refreshes too", v, raw, lots[3])
	})
	w.stop(t)

	for _, limit := range limits {
		if len(reads[limit]) < 80 {
			t.Errorf("limit %d: %d reads in %s at a 1 s interval, want at least 80", limit, len(reads[limit]), watchSoak)
		}
		// More scans than the limit: counted and never refreshed, a
		// message would have been dropped.
		if !oldest[limit] {
			t.Errorf("RabbitMQ %s, limit %d: the oldest message's age never exported", v, limit)
		}
		if len(scans[limit]) < 25 {
			t.Errorf("RabbitMQ %s, limit %d: %d scans in %s, want at least 25", v, limit, len(scans[limit]), watchSoak)
		}
		got := brokertest.Drain(t, ch, lots[limit])
		if !slices.Equal(ids(got), ids(toDeliveries(msgs[limit]))) {
			t.Fatalf("limit %d, after %s watched: %v, want %v (nothing lost, the order kept)", limit, watchSoak, ids(got), ids(toDeliveries(msgs[limit])))
		}
		for _, d := range got {
			n, _ := broker.IntValue(d.Headers["x-delivery-count"])
			if !v.NackCountsTowardDeliveryLimit() && n != 0 {
				t.Errorf("RabbitMQ %s: %s x-delivery-count %d after the watch, want none counted", v, d.MessageId, n)
			}
			if n >= int64(limit) {
				t.Errorf("RabbitMQ %s: %s x-delivery-count %d, want below its limit %d", v, d.MessageId, n, limit)
			}
		}
		if !v.NackCountsTowardDeliveryLimit() {
			// The proof that the head was read: 4.3 counts every hand-out.
			if n, _ := broker.IntValue(got[0].Headers["x-acquired-count"]); n < 25 {
				t.Errorf("RabbitMQ %s: the head's x-acquired-count %d, want the watch's reads (≥ 25)", v, n)
			}
		}
		t.Logf("RabbitMQ %s, limit %d: %d reads, %d scans in %s; %d messages, order kept", v, limit, len(reads[limit]), len(scans[limit]), watchSoak, len(got))
	}
	t.Logf("RabbitMQ %s: the broker counted %d published into the limit-3 lot, the watch exported 20", v, raw)
}

// TestWatchExportsAnyErrorText: error texts that are "none" or "other",
// one missing, and an x-death whose strings are not UTF-8 each get a
// series of their own, and /metrics keeps answering 200 (a duplicate
// label set fails every scrape; a label that is not UTF-8 made the
// client panic).
func TestWatchExportsAnyErrorText(t *testing.T) {
	ch := brokertest.Channel(t)
	lot := brokertest.Name(t, "texts.dlq")
	brokertest.DeclareQueue(t, ch, lot, nil)
	now := time.Now().Truncate(time.Second)
	bad := parked("x-1", "", now)
	bad.Headers[retrycore.HeaderDeath] = []any{amqp.Table{"queue": "src\xff", "reason": "rejected\xfe", "count": int64(1)}}
	brokertest.PublishMany(t, ch, "", lot, []amqp.Publishing{parked("n-1", "none", now), parked("o-1", "other", now), parked("e-1", "", now), bad})

	w := startWatch(t, "", watch.Options{Queues: []string{lot}, NoDiscover: true, Interval: time.Second, ScanInterval: time.Second, TopGroups: 10})
	labels := map[string]string{"vhost": "/", "queue": lot}
	var groups map[string]float64
	brokertest.Eventually(t, 30*time.Second, 200*time.Millisecond, func() bool {
		groups = scrape(t, w.base).series("parkinglot_parked_messages_by_error", labels, "error_group")
		return len(groups) == 4
	}, func() string { return fmt.Sprintf("groups %v, want 4", groups) })
	want := map[string]float64{`"none"`: 1, `"other"`: 1, watch.GroupNone: 1, retrycore.GroupKey("dead-lettered: rejected\ufffd in src\ufffd"): 1}
	if fmt.Sprint(groups) != fmt.Sprint(want) {
		t.Errorf("groups %v, want %v", groups, want)
	}
	w.stop(t)
	if got := len(brokertest.Drain(t, ch, lot)); got != 4 {
		t.Errorf("%d messages after the watch, want 4", got)
	}
}

// TestWatchScanFailingWhileConnectedIsCountedAndRetried: a parking lot
// deleted while the watch scans it (the broker cancels the scan's
// consumer; the connection stays) and declared again with other messages:
// the failed scan is counted, the connection is not lost, the next scan
// counts the new messages alone (no group of the deleted ones is left),
// and the new messages stay, in order.
func TestWatchScanFailingWhileConnectedIsCountedAndRetried(t *testing.T) {
	ch := brokertest.Channel(t)
	lot := brokertest.Name(t, "scanfail.dlq")
	brokertest.DeclareQueue(t, ch, lot, nil)
	// Enough messages that the scan holds them for a while.
	const many = 20_000
	old := make([]amqp.Publishing, many)
	for i := range old {
		old[i] = parked(fmt.Sprintf("old-%d", i), "ledger down", time.Now().Add(-time.Hour))
	}
	brokertest.PublishMany(t, ch, "", lot, old)

	w := startWatch(t, "", watch.Options{Queues: []string{lot}, NoDiscover: true, Interval: time.Second, ScanInterval: time.Second, TopGroups: 10})
	// The scan is under way once its consumer is on the queue (a head
	// read takes its message with basic.get, no consumer), and far from
	// its end while half the messages are still ready (once it has read
	// them all, a deletion only meets its give-back).
	brokertest.Eventually(t, 60*time.Second, 5*time.Millisecond, func() bool {
		q, err := ch.QueueDeclarePassive(lot, true, false, false, false, nil)
		if err != nil {
			t.Fatalf("%s: %v", lot, err)
		}
		return q.Consumers > 0 && q.Messages > many/2
	}, func() string { return "no scan began" })
	if _, err := ch.QueueDelete(lot, false, false, false); err != nil {
		t.Fatal(err)
	}
	// Declared again once the scan has failed: a scan's next segment
	// could otherwise go on in the new queue.
	labels := map[string]string{"vhost": "/", "queue": lot}
	var m metrics
	scanErrors := func() float64 {
		n, _ := m.value("parkinglot_watch_errors_total", map[string]string{"kind": string(watch.ErrScan)})
		return n
	}
	brokertest.Eventually(t, 60*time.Second, 50*time.Millisecond, func() bool { m = scrape(t, w.base); return scanErrors() >= 1 },
		func() string { return "the scan's failure was not counted" })
	brokertest.DeclareQueue(t, ch, lot, nil)
	fresh := []amqp.Publishing{parked("new-1", "schema invalid 1", time.Now()), parked("new-2", "schema invalid 2", time.Now())}
	brokertest.PublishMany(t, ch, "", lot, fresh)

	var groups map[string]float64
	want := map[string]float64{retrycore.GroupKey("schema invalid 1"): 2}
	brokertest.Eventually(t, 60*time.Second, 100*time.Millisecond, func() bool {
		m = scrape(t, w.base)
		groups = m.series("parkinglot_parked_messages_by_error", labels, "error_group")
		return fmt.Sprint(groups) == fmt.Sprint(want)
	}, func() string { return fmt.Sprintf("groups %v, want %v", groups, want) })
	if n, _ := m.value("parkinglot_watch_errors_total", map[string]string{"kind": string(watch.ErrConnect)}); n != 0 {
		t.Errorf("connect errors %v: the connection was never lost", n)
	}
	if r, _ := m.value("parkinglot_watch_ready", nil); r != 1 {
		t.Errorf("parkinglot_watch_ready %v, want 1", r)
	}
	w.stop(t)
	if got, want := ids(brokertest.Drain(t, ch, lot)), ids(toDeliveries(fresh)); !slices.Equal(got, want) {
		t.Errorf("%s after the watch: %v, want %v", lot, got, want)
	}
}

// TestWatchWithoutTheManagementAPIReadsNoQueueAnotherConsumerWorksOn: the
// management API answers at first (the queue is known as classic, its
// head read) and then not; another consumer then holds a message. The
// watch counts the consumers by asking the queue itself, so it reads no
// head while the other works (a head read would leave the next message
// redelivered), and still exports the depth.
func TestWatchWithoutTheManagementAPIReadsNoQueueAnotherConsumerWorksOn(t *testing.T) {
	ch := brokertest.Channel(t)
	lot, msgs := fiveParked(t, ch, "nomgmt.dlq")
	mu, err := url.Parse(brokertest.ManagementURL())
	if err != nil {
		t.Fatal(err)
	}
	mgmt := newTCPProxy(t, mu.Host)
	w := startWatchOn(t, replay.Connection{URL: brokertest.URL(), ManagementURL: mgmt.viaProxy(brokertest.ManagementURL()), Vhost: "/"},
		watch.Options{Queues: []string{lot}, NoDiscover: true, Interval: time.Second, ScanInterval: time.Hour, TopGroups: -1})
	labels := map[string]string{"vhost": "/", "queue": lot}
	var m metrics
	brokertest.Eventually(t, 30*time.Second, 100*time.Millisecond, func() bool {
		m = scrape(t, w.base)
		a, _ := m.value("parkinglot_oldest_parked_age_seconds", labels)
		return a >= 50 // m-0's parked header, a minute ago: its head was read
	}, func() string { return "no head read with the management API up" })
	mgmt.stop()

	// Another consumer (a service, a replay) holds the first message.
	other, deliveries := anotherConsumer(t, lot)
	if d := <-deliveries; d.MessageId != "m-0" {
		t.Fatalf("the other consumer got %q, want m-0", d.MessageId)
	}
	// Three reads after, each of which would have read the head.
	from, _ := m.value("parkinglot_watch_last_read_timestamp_seconds", labels)
	var last float64
	brokertest.Eventually(t, 60*time.Second, 100*time.Millisecond, func() bool {
		m = scrape(t, w.base)
		last, _ = m.value("parkinglot_watch_last_read_timestamp_seconds", labels)
		return last-from >= 4
	}, func() string { return fmt.Sprintf("reads from %v to %v, want four seconds of them", from, last) })
	if d, _ := m.value("parkinglot_parked_messages", labels); d != 4 {
		t.Errorf("depth %v, want the 4 ready", d)
	}
	w.stop(t)
	if err := other.Close(); err != nil { // m-0 goes back, first
		t.Fatal(err)
	}
	got := brokertest.Drain(t, ch, lot)
	if !slices.Equal(ids(got), ids(toDeliveries(msgs))) {
		t.Fatalf("%s after the watch: %v, want %v", lot, ids(got), ids(toDeliveries(msgs)))
	}
	for _, d := range got[1:] {
		if d.Redelivered {
			t.Errorf("%s was redelivered: the watch read it while another consumer worked on the queue", d.MessageId)
		}
	}
}

// TestWatchAgeLeavesAHeadOthersTookWhileTheyConsume: a parking lot whose
// two-hour-old messages another consumer takes (a replay draining it) no
// longer reports their age while that consumer works on it and the depth
// falls: the watch cannot read the new head, and dates what is left by
// when it first saw it. Once the consumer is gone the head read answers
// again; nothing is taken or reordered.
func TestWatchAgeLeavesAHeadOthersTookWhileTheyConsume(t *testing.T) {
	ch := brokertest.Channel(t)
	lot := brokertest.Name(t, "drained.dlq")
	brokertest.DeclareQueue(t, ch, lot, nil)
	var msgs []amqp.Publishing
	for i := range 6 {
		at := time.Now().Add(-2 * time.Hour)
		if i >= 3 {
			at = time.Now()
		}
		msgs = append(msgs, parked(fmt.Sprintf("m-%d", i), "ledger down", at))
	}
	brokertest.PublishMany(t, ch, "", lot, msgs)
	w := startWatch(t, "", watch.Options{Queues: []string{lot}, NoDiscover: true, Interval: time.Second, ScanInterval: time.Hour, TopGroups: -1})
	labels := map[string]string{"vhost": "/", "queue": lot}
	age := func() float64 {
		a, _ := scrape(t, w.base).value("parkinglot_oldest_parked_age_seconds", labels)
		return a
	}
	var a float64
	brokertest.Eventually(t, 30*time.Second, 100*time.Millisecond, func() bool { a = age(); return a >= 7000 },
		func() string { return fmt.Sprintf("age %v, want the head's two hours", a) })

	// Another consumer takes the three old messages and holds the next.
	other, deliveries := anotherConsumer(t, lot)
	for i := range 3 {
		d := <-deliveries
		if d.MessageId != fmt.Sprintf("m-%d", i) {
			t.Fatalf("the other consumer got %s, want m-%d", d.MessageId, i)
		}
		if err := d.Ack(false); err != nil {
			t.Fatal(err)
		}
	}
	if d := <-deliveries; d.MessageId != "m-3" {
		t.Fatalf("the other consumer holds %s, want m-3", d.MessageId)
	}
	brokertest.Eventually(t, 30*time.Second, 100*time.Millisecond, func() bool { a = age(); return a < 3600 },
		func() string {
			return fmt.Sprintf("age %v while the others drained the old messages, want under an hour", a)
		})

	if err := other.Close(); err != nil { // m-3 goes back, first
		t.Fatal(err)
	}
	brokertest.Eventually(t, 30*time.Second, 100*time.Millisecond, func() bool {
		m := scrape(t, w.base)
		d, _ := m.value("parkinglot_parked_messages", labels)
		a, _ = m.value("parkinglot_oldest_parked_age_seconds", labels)
		return d == 3 && a < 600
	}, func() string { return fmt.Sprintf("age %v once the others left, want m-3's own (parked now)", a) })
	w.stop(t)
	got := brokertest.Drain(t, ch, lot)
	if want := []string{"m-3", "m-4", "m-5"}; !slices.Equal(ids(got), want) {
		t.Fatalf("%s after the watch: %v, want %v", lot, ids(got), want)
	}
	// m-4 was the head while the other consumer worked: not read then.
	if got[1].Redelivered {
		t.Errorf("m-4 was redelivered: the watch read the head while another consumer worked on the queue")
	}
}

// fiveParked is a parking lot (named by suffix) of five messages, m-0 to
// m-4, parked a minute ago with one error.
func fiveParked(t *testing.T, ch *amqp.Channel, suffix string) (lot string, msgs []amqp.Publishing) {
	t.Helper()
	lot = brokertest.Name(t, suffix)
	brokertest.DeclareQueue(t, ch, lot, nil)
	for i := range 5 {
		msgs = append(msgs, parked(fmt.Sprintf("m-%d", i), "ledger down", time.Now().Add(-time.Minute)))
	}
	brokertest.PublishMany(t, ch, "", lot, msgs)
	return lot, msgs
}

// anotherConsumer consumes queue with a prefetch of one, as a service or
// a replay would: it holds one message at a time.
func anotherConsumer(t *testing.T, queue string) (*amqp.Channel, <-chan amqp.Delivery) {
	t.Helper()
	ch := brokertest.Channel(t)
	if err := ch.Qos(1, 0, false); err != nil {
		t.Fatal(err)
	}
	deliveries, err := ch.Consume(queue, "", false, false, false, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	return ch, deliveries
}

// TestWatchRestartKeepsTheFirstSeenAge: a parking lot whose messages tell
// no time (no parked header, death or timestamp) is dated from when the
// watch first saw them and marked a lower bound; a watch restarted with
// the same state file goes on from that date, not from its own start,
// while a lot whose messages tell their time is not marked.
func TestWatchRestartKeepsTheFirstSeenAge(t *testing.T) {
	ch := brokertest.Channel(t)
	bare, timed := brokertest.Name(t, "bare.dlq"), brokertest.Name(t, "timed.dlq")
	brokertest.DeclareQueue(t, ch, bare, nil)
	brokertest.DeclareQueue(t, ch, timed, nil)
	brokertest.PublishMany(t, ch, "", bare, []amqp.Publishing{{MessageId: "b-1", Body: []byte("{}")}, {MessageId: "b-2", Body: []byte("{}")}})
	brokertest.Publish(t, ch, "", timed, parked("t-1", "boom", time.Now().Add(-time.Hour)))
	state := filepath.Join(t.TempDir(), "watch.json")
	o := watch.Options{Queues: []string{bare, timed}, NoDiscover: true, Interval: time.Second, ScanInterval: time.Second, StateFile: state}
	lot := func(q string) map[string]string { return map[string]string{"vhost": "/", "queue": q} }

	w := startWatch(t, "", o)
	var age float64
	brokertest.Eventually(t, 30*time.Second, 200*time.Millisecond, func() bool {
		age, _ = scrape(t, w.base).value("parkinglot_oldest_parked_age_seconds", lot(bare))
		return age >= 5
	}, func() string { return fmt.Sprintf("%s's first-seen age never reached 5 s: %.1f", bare, age) })
	m := scrape(t, w.base)
	if b, ok := m.value("parkinglot_oldest_parked_age_lower_bound", lot(bare)); !ok || b != 1 {
		t.Errorf("%s (no time in its messages): lower bound %v (%v), want 1", bare, b, ok)
	}
	if b, ok := m.value("parkinglot_oldest_parked_age_lower_bound", lot(timed)); !ok || b != 0 {
		t.Errorf("%s (parked an hour ago): lower bound %v (%v), want 0", timed, b, ok)
	}
	w.stop(t)
	stopped := time.Now()

	again := startWatch(t, "", o)
	brokertest.Eventually(t, 30*time.Second, 200*time.Millisecond, func() bool {
		_, ok := scrape(t, again.base).value("parkinglot_oldest_parked_age_seconds", lot(bare))
		return ok
	}, func() string { return "the restarted watch exported no age for " + bare })
	after, _ := scrape(t, again.base).value("parkinglot_oldest_parked_age_seconds", lot(bare))
	if want := age + time.Since(stopped).Seconds() - 2; after < want {
		t.Errorf("after a restart %s's age is %.1f s, want at least %.1f s (from the first watch's first sight)", bare, after, want)
	}
	t.Logf("%s: %.1f s before the restart, %.1f s after", bare, age, after)
}
