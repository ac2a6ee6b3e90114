//go:build integration

package alerting_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/parkinglot/parkinglot/broker/brokertest"
)

// awaitFor bounds each wait of the end-to-end test for Prometheus,
// Alertmanager or the webhook.
const awaitFor = 2 * time.Minute

// hookEvent is one alert of a notification Alertmanager posted.
type hookEvent struct {
	Status      string            `json:"status"`
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
	StartsAt    time.Time         `json:"startsAt"`
}

// webhook is the test's receiver: every alert of every notification, in
// the order they came.
type webhook struct {
	url    string
	mu     sync.Mutex
	events []hookEvent
	heard  chan struct{} // a value after each notification
}

func newWebhook(t *testing.T) *webhook {
	h := &webhook{heard: make(chan struct{}, 1)}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Alerts []hookEvent `json:"alerts"`
		}
		b, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(b, &body); err != nil {
			t.Errorf("webhook body %q: %v", b, err)
		}
		h.mu.Lock()
		h.events = append(h.events, body.Alerts...)
		h.mu.Unlock()
		select {
		case h.heard <- struct{}{}:
		default:
		}
	}))
	t.Cleanup(srv.Close)
	h.url = srv.URL
	return h
}

func (h *webhook) len() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.events)
}

// since is the events from the from-th on that keep says.
func (h *webhook) since(from int, keep func(hookEvent) bool) []hookEvent {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []hookEvent
	for _, e := range h.events[from:] {
		if keep(e) {
			out = append(out, e)
		}
	}
	return out
}

// lastSince is the latest event of the alert, from the from-th on. Of
// the watch-down alert, only the watch's own (it has an instance): its
// absent() variant may fire and resolve around Prometheus's first scrape,
// and its resolve may arrive at any later point of the test.
func (h *webhook) lastSince(from int, alert string) (hookEvent, bool) {
	es := h.since(from, func(e hookEvent) bool {
		return e.Labels["alertname"] == alert && (alert != "ParkingLotWatchDown" || e.Labels["instance"] != "")
	})
	if len(es) == 0 {
		return hookEvent{}, false
	}
	return es[len(es)-1], true
}

func (h *webhook) last(alert string) hookEvent {
	e, _ := h.lastSince(0, alert)
	return e
}

// await waits, as notifications come and for awaitFor at most, until the
// latest event of each alert since the from-th is status.
func (h *webhook) await(t *testing.T, from int, status string, alerts ...string) {
	t.Helper()
	deadline := time.After(awaitFor)
	for {
		all := true
		for _, a := range alerts {
			e, ok := h.lastSince(from, a)
			all = all && ok && e.Status == status
		}
		if all {
			return
		}
		select {
		case <-h.heard:
		case <-deadline:
			t.Fatalf("not every one of %v reached the webhook %s within %s: %+v", alerts, status, awaitFor, h.since(from, func(hookEvent) bool { return true }))
		}
	}
}

// promAPI is Prometheus's HTTP API.
type promAPI string

// getJSON decodes the data of an API answer into v.
func getJSON(u string, v any) error {
	resp, err := http.Get(u)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s %s", u, resp.Status, b)
	}
	return json.Unmarshal(b, v)
}

// firing is when each firing alert (by name) became active, as
// Prometheus says: an alert resolved and raised again is active from later.
func (p promAPI) firing(t *testing.T) map[string]time.Time {
	t.Helper()
	var r struct {
		Data struct {
			Alerts []struct {
				Labels   map[string]string `json:"labels"`
				State    string            `json:"state"`
				ActiveAt time.Time         `json:"activeAt"`
			} `json:"alerts"`
		} `json:"data"`
	}
	if err := getJSON(string(p)+"/api/v1/alerts", &r); err != nil {
		t.Fatal(err)
	}
	out := map[string]time.Time{}
	for _, a := range r.Data.Alerts {
		if a.State == "firing" {
			out[a.Labels["alertname"]] = a.ActiveAt
		}
	}
	return out
}

// assertFiringSince: each alert of since fires, active since the same
// time.
func (p promAPI) assertFiringSince(t *testing.T, since map[string]time.Time, when string) {
	t.Helper()
	now := p.firing(t)
	for a, at := range since {
		if got, ok := now[a]; !ok || !got.Equal(at) {
			t.Errorf("%s: Prometheus has %s firing since %v (firing: %v), want since %v", when, a, got, ok, at)
		}
	}
}

// awaitEvaluatedOn waits until query returns a series, then until the
// rules have been evaluated after that: on what the query saw.
func (p promAPI) awaitEvaluatedOn(t *testing.T, query string) {
	t.Helper()
	brokertest.Eventually(t, awaitFor, 200*time.Millisecond, func() bool {
		var r struct {
			Data struct {
				Result []json.RawMessage `json:"result"`
			} `json:"data"`
		}
		if err := getJSON(string(p)+"/api/v1/query?query="+url.QueryEscape(query), &r); err != nil {
			t.Fatal(err)
		}
		return len(r.Data.Result) > 0
	}, func() string { return "Prometheus found no " + query })
	seen := time.Now()
	brokertest.Eventually(t, awaitFor, 200*time.Millisecond, func() bool {
		var r struct {
			Data struct {
				Groups []struct {
					LastEvaluation time.Time `json:"lastEvaluation"`
				} `json:"groups"`
			} `json:"data"`
		}
		if err := getJSON(string(p)+"/api/v1/rules", &r); err != nil {
			t.Fatal(err)
		}
		return len(r.Data.Groups) > 0 && r.Data.Groups[0].LastEvaluation.After(seen)
	}, func() string { return fmt.Sprintf("Prometheus evaluated no rule after %v", seen) })
}

// awaitAlertmanagerHolds waits until Prometheus has sent Alertmanager each
// alert of startsAt again, and checks it is the same: active, from when it
// first fired (an alert resolved and raised again starts later).
func awaitAlertmanagerHolds(t *testing.T, am string, startsAt map[string]time.Time) {
	t.Helper()
	after := time.Now()
	type amAlert struct {
		Labels    map[string]string `json:"labels"`
		StartsAt  time.Time         `json:"startsAt"`
		UpdatedAt time.Time         `json:"updatedAt"`
		Status    struct {
			State string `json:"state"`
		} `json:"status"`
	}
	var alerts []amAlert
	fresh := map[string]time.Time{}
	brokertest.Eventually(t, awaitFor, 200*time.Millisecond, func() bool {
		alerts = nil
		if err := getJSON(am+"/api/v2/alerts", &alerts); err != nil {
			t.Fatal(err)
		}
		clear(fresh)
		for _, a := range alerts {
			if _, ok := startsAt[a.Labels["alertname"]]; ok && a.UpdatedAt.After(after) && a.Status.State == "active" {
				fresh[a.Labels["alertname"]] = a.StartsAt
			}
		}
		return len(fresh) == len(startsAt)
	}, func() string {
		return fmt.Sprintf("Prometheus did not send Alertmanager %v again: %+v", startsAt, alerts)
	})
	for a, at := range startsAt {
		if !fresh[a].Equal(at) {
			t.Errorf("Alertmanager holds %s from %v, want from %v, when it first fired", a, fresh[a], at)
		}
	}
}
