package clustertest

import (
	"bufio"
	"encoding/binary"
	"io"
	"net"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parkinglot/parkinglot/broker/brokertest"
)

// FaultProxy is a TCP proxy to the test broker that injects a broker's
// silences: Mute stops passing bytes on both ways for good (a node that
// never answers, as in a cluster minority), HoldAfter holds the broker's
// frames for a while (a broker that pauses, then goes on). When either side
// closes its socket the proxy closes the other, as a dropped TCP connection
// does.
type FaultProxy struct {
	// URL is the test broker's AMQP URL with the proxy's address.
	URL   string
	muted atomic.Bool

	mu   sync.Mutex
	hold *frameHold
}

// frameHold: after passing on the n-th broker frame that match accepts,
// hold the broker's frames for d.
type frameHold struct {
	match func(frameType byte, payload []byte) bool
	n     int
	d     time.Duration
	held  chan time.Duration // how long the hold lasted, once it ended
}

// NewFaultProxy starts a proxy, closed with its connections when the test
// ends.
func NewFaultProxy(t testing.TB) *FaultProxy {
	t.Helper()
	target, err := url.Parse(brokertest.URL())
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &FaultProxy{}
	u := *target
	u.Host = ln.Addr().String()
	p.URL = u.String()
	var (
		mu     sync.Mutex
		conns  []net.Conn
		closed bool // the test ended: late connections are closed at once
		wg     sync.WaitGroup
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
			if closed {
				mu.Unlock()
				_, _ = c.Close(), b.Close()
				continue
			}
			conns = append(conns, c, b)
			mu.Unlock()
			wg.Add(2)
			go func() {
				defer wg.Done()
				_, _ = io.Copy(muteWriter{b, &p.muted}, c)
				_, _ = b.Close(), c.Close()
			}()
			go func() {
				defer wg.Done()
				p.brokerFrames(muteWriter{c, &p.muted}, b)
				_, _ = b.Close(), c.Close()
			}()
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		mu.Lock()
		closed = true
		for _, c := range conns {
			_ = c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return p
}

// Mute stops passing bytes on, both ways, for good.
func (p *FaultProxy) Mute() { p.muted.Store(true) }

// HoldAfter makes the proxy, once it has passed on the n-th frame from the
// broker that match accepts (the frame's type and payload, see
// IsMethod), hold the broker's frames for d, then pass them on. The
// returned channel says how long the hold lasted, once it ended.
func (p *FaultProxy) HoldAfter(n int, match func(frameType byte, payload []byte) bool, d time.Duration) <-chan time.Duration {
	h := &frameHold{match: match, n: n, d: d, held: make(chan time.Duration, 1)}
	p.mu.Lock()
	p.hold = h
	p.mu.Unlock()
	return h.held
}

// IsMethod matches an AMQP method frame of the class and method given
// (basic.consume-ok is 60, 21).
func IsMethod(class, method uint16) func(frameType byte, payload []byte) bool {
	return func(frameType byte, payload []byte) bool {
		return frameType == 1 && len(payload) >= 4 &&
			binary.BigEndian.Uint16(payload) == class && binary.BigEndian.Uint16(payload[2:]) == method
	}
}

// brokerFrames passes the broker's AMQP frames on one at a time (type,
// channel, size, payload, frame end), applying a hold.
func (p *FaultProxy) brokerFrames(dst io.Writer, src io.Reader) {
	r := bufio.NewReader(src)
	head := make([]byte, 7)
	for {
		if _, err := io.ReadFull(r, head); err != nil {
			return
		}
		size := binary.BigEndian.Uint32(head[3:])
		frame := make([]byte, 7+int(size)+1)
		copy(frame, head)
		if _, err := io.ReadFull(r, frame[7:]); err != nil {
			return
		}
		if _, err := dst.Write(frame); err != nil {
			return
		}
		p.mu.Lock()
		h := p.hold
		if h != nil && h.match(head[0], frame[7:7+size]) {
			if h.n--; h.n == 0 {
				p.hold = nil
			} else {
				h = nil
			}
		} else {
			h = nil
		}
		p.mu.Unlock()
		if h != nil {
			start := time.Now()
			time.Sleep(h.d) // the fault itself: the broker's frames wait
			h.held <- time.Since(start)
		}
	}
}

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
