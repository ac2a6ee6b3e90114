//go:build integration

package watch_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/parkinglot/parkinglot/broker/brokertest"
	"github.com/parkinglot/parkinglot/replay"
	"github.com/parkinglot/parkinglot/replay/watch"
)

// freeAddr is a loopback address no one listens on now.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	return addr
}

// watchProc is a watch serving its metrics as `parkinglot watch` does
// (the same collector and handler), in the test's process.
type watchProc struct {
	base   string // http://ADDR
	srv    *http.Server
	cancel context.CancelFunc
	done   chan error
}

// startWatch starts a watch with o on the broker under test (or url, when
// not empty) and serves it on a free address; the test's end stops it.
// (ui/cli tests the command's flags; the watch's own rules are here.)
func startWatch(t *testing.T, url string, o watch.Options) *watchProc {
	t.Helper()
	if url == "" {
		url = brokertest.URL()
	}
	return startWatchOn(t, replay.Connection{URL: url, ManagementURL: brokertest.ManagementURL(), Vhost: "/"}, o)
}

// startWatchOn is startWatch on conn's URLs.
func startWatchOn(t *testing.T, conn replay.Connection, o watch.Options) *watchProc {
	t.Helper()
	o.Open = func(ctx context.Context, _ string) (*replay.Session, error) {
		return replay.Open(ctx, conn, replay.Config{}, "parkinglot-test watch "+t.Name(), nil)
	}
	w := watch.New(o)
	reg := prometheus.NewRegistry()
	reg.MustRegister(watch.NewCollector(w))
	ln, err := net.Listen("tcp", freeAddr(t))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	p := &watchProc{base: "http://" + ln.Addr().String(), srv: &http.Server{Handler: watch.NewHandler(w, reg), ReadHeaderTimeout: 10 * time.Second},
		cancel: cancel, done: make(chan error, 1)}
	go func() { _ = p.srv.Serve(ln) }()
	go func() { p.done <- w.Run(ctx) }()
	t.Cleanup(func() { p.stop(t) })
	brokertest.Eventually(t, 10*time.Second, 50*time.Millisecond, func() bool {
		code, _ := get(p.base + "/livez")
		return code == http.StatusOK
	}, func() string { return "the watch's /livez did not answer 200" })
	return p
}

// stop ends the watch and waits for it (bounded): every session it opened
// is closed, and nothing is served.
func (w *watchProc) stop(t *testing.T) {
	if w.cancel == nil {
		return
	}
	w.cancel()
	w.cancel = nil
	select {
	case err := <-w.done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("watch ended with %v, want context.Canceled", err)
		}
	case <-time.After(30 * time.Second):
		t.Error("the watch did not stop within 30s")
	}
	_ = w.srv.Close()
}

// get is one HTTP GET: its status and body (0 when it got no answer).
func get(u string) (int, string) {
	c := http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get(u)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// metrics is one scrape of /metrics, parsed.
type metrics map[string]*dto.MetricFamily

func scrape(t *testing.T, base string) metrics {
	t.Helper()
	code, body := get(base + "/metrics")
	if code != http.StatusOK {
		t.Fatalf("GET %s/metrics: %d %s", base, code, body)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewBufferString(body))
	if err != nil {
		t.Fatalf("parse /metrics: %v\n%s", err, body)
	}
	return fams
}

// value is the sample of name whose labels include want.
func (m metrics) value(name string, want map[string]string) (float64, bool) {
	f, ok := m[name]
	if !ok {
		return 0, false
	}
next:
	for _, s := range f.GetMetric() {
		have := map[string]string{}
		for _, l := range s.GetLabel() {
			have[l.GetName()] = l.GetValue()
		}
		for k, v := range want {
			if have[k] != v {
				continue next
			}
		}
		switch {
		case s.Gauge != nil:
			return s.GetGauge().GetValue(), true
		case s.Counter != nil:
			return s.GetCounter().GetValue(), true
		}
	}
	return 0, false
}

// series is every sample of name whose labels include want, by the value
// of label by.
func (m metrics) series(name string, want map[string]string, by string) map[string]float64 {
	out := map[string]float64{}
	f, ok := m[name]
	if !ok {
		return out
	}
next:
	for _, s := range f.GetMetric() {
		have := map[string]string{}
		for _, l := range s.GetLabel() {
			have[l.GetName()] = l.GetValue()
		}
		for k, v := range want {
			if have[k] != v {
				continue next
			}
		}
		out[have[by]] = s.GetGauge().GetValue()
	}
	return out
}

// tcpProxy passes connections to the broker's AMQP port until stopped; a
// stop closes every connection through it and refuses new ones, a start
// listens again on the same address.
type tcpProxy struct {
	t      *testing.T
	addr   string
	target string

	mu    sync.Mutex
	ln    net.Listener
	conns []net.Conn
	wg    sync.WaitGroup
}

func newTCPProxy(t *testing.T, target string) *tcpProxy {
	p := &tcpProxy{t: t, addr: freeAddr(t), target: target}
	p.start()
	t.Cleanup(p.stop)
	return p
}

// viaProxy is rawURL with its host and port replaced by the proxy's.
func (p *tcpProxy) viaProxy(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		p.t.Fatal(err)
	}
	u.Host = p.addr
	return u.String()
}

func (p *tcpProxy) start() {
	ln, err := net.Listen("tcp", p.addr)
	if err != nil {
		p.t.Fatalf("proxy listen %s: %v", p.addr, err)
	}
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			b, err := net.Dial("tcp", p.target)
			if err != nil {
				_ = c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, b)
			p.mu.Unlock()
			p.wg.Add(2)
			go func() { defer p.wg.Done(); _, _ = io.Copy(b, c); _ = b.Close() }()
			go func() { defer p.wg.Done(); _, _ = io.Copy(c, b); _ = c.Close() }()
		}
	}()
}

func (p *tcpProxy) stop() {
	p.mu.Lock()
	if p.ln != nil {
		_ = p.ln.Close()
		p.ln = nil
	}
	for _, c := range p.conns {
		_ = c.Close()
	}
	p.conns = nil
	p.mu.Unlock()
	p.wg.Wait()
}
