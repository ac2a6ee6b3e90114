package brokertest

import (
	"io"
	"net"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
)

// MuteProxy is a TCP proxy to the test broker that can stop passing the
// broker's bytes on: the client's frames still reach the broker, but no
// answer reaches the client, as with a node that never answers (a cluster
// minority).
type MuteProxy struct {
	// URL is the test broker's AMQP URL with the proxy's address.
	URL   string
	muted atomic.Bool
}

// NewMuteProxy starts a proxy, closed with its connections when the test ends.
func NewMuteProxy(t testing.TB) *MuteProxy {
	t.Helper()
	target, err := url.Parse(URL())
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &MuteProxy{}
	u := *target
	u.Host = ln.Addr().String()
	p.URL = u.String()
	var (
		mu    sync.Mutex
		conns []net.Conn
		wg    sync.WaitGroup
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return // closed at the end of the test
			}
			b, err := net.Dial("tcp", target.Host)
			if err != nil {
				_ = c.Close()
				continue
			}
			mu.Lock()
			conns = append(conns, c, b)
			mu.Unlock()
			wg.Add(2)
			go func() { defer wg.Done(); _, _ = io.Copy(b, c) }()
			go func() { defer wg.Done(); _, _ = io.Copy(muteWriter{c, &p.muted}, b) }()
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		mu.Lock()
		for _, c := range conns {
			_ = c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return p
}

// Mute stops passing the broker's bytes on, for good.
func (p *MuteProxy) Mute() { p.muted.Store(true) }

// muteWriter drops what it is given once muted.
type muteWriter struct {
	w     io.Writer
	muted *atomic.Bool
}

func (m muteWriter) Write(b []byte) (int, error) {
	if m.muted.Load() {
		return len(b), nil
	}
	return m.w.Write(b)
}
