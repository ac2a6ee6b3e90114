//go:build integration

package replay

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"syscall"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/broker/brokertest"
	"github.com/parkinglot/parkinglot/retrycore"
)

// A publish to a missing exchange closes the channel with 404 (here the
// passive check is bypassed, as when the exchange is deleted during a
// run): that message fails with one clear line, the others in flight are
// re-sent on a new channel, nothing is lost.
func TestPublisherMissingExchangeClosesChannelAndRecovers(t *testing.T) {
	ch := brokertest.Channel(t)
	dst := brokertest.Name(t, "dst")
	brokertest.DeclareQueue(t, ch, dst, nil)
	missing := brokertest.Name(t, "gone")

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	s, err := Open(ctx, Connection{URL: brokertest.URL(), ManagementURL: brokertest.ManagementURL(), Vhost: "/"}, Config{}, "pltest-internal-"+hex.EncodeToString(b), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	p, err := newPublisher(ctx, s, 16)
	if err != nil {
		t.Fatal(err)
	}
	defer p.close()
	p.exchanges[missing] = nil // pretend it was there when checked

	mk := func(id, ex, rk string) *job {
		return &job{id: id, replayID: NewReplayID(), dest: retrycore.Destination{Exchange: ex, RoutingKey: rk},
			pub: amqp.Publishing{MessageId: id, Body: []byte(id)}}
	}
	var out []settled
	for _, j := range []*job{mk("a", "", dst), mk("b", missing, "rk"), mk("c", "", dst), mk("d", "", dst)} {
		j.pub.Headers = amqp.Table{retrycore.HeaderReplayID: j.replayID}
		out = append(out, p.send(ctx, j)...)
	}
	deadline := time.After(20 * time.Second)
	for !p.idle() {
		select {
		case c, ok := <-p.confirmations():
			if !ok {
				out = append(out, p.lost(ctx)...)
				continue
			}
			out = append(out, p.confirmed(ctx, c)...)
		case <-deadline:
			t.Fatalf("still in flight: %d", len(p.inflight))
		}
	}
	fates := map[string]error{}
	for _, s := range out {
		if _, dup := fates[s.job.id]; dup {
			t.Errorf("%s settled twice", s.job.id)
		}
		fates[s.job.id] = s.err
	}
	want := `exchange "` + missing + `" does not exist in vhost "/"`
	if err := fates["b"]; err == nil || err.Error() != want || !errors.Is(err, broker.ErrNotFound) {
		t.Errorf("b: %v, want %q", err, want)
	}
	for _, id := range []string{"a", "c", "d"} {
		if err, ok := fates[id]; !ok || err != nil {
			t.Errorf("%s: settled=%v err=%v; want confirmed (re-sent on a new channel if needed)", id, ok, err)
		}
	}
	got := map[string]int{}
	for _, d := range brokertest.Drain(t, ch, dst) {
		got[d.MessageId]++
	}
	for _, id := range []string{"a", "c", "d"} {
		if got[id] == 0 {
			t.Errorf("%s did not arrive (got %v)", id, got)
		}
	}
	if p.reopens == 0 {
		t.Errorf("the channel was not reopened: the test did not hit the 404 path")
	}
}

// A publish that fails while its connection is going away is re-sent on a
// new one, not reported as refused: amqp091-go marks the connection closed
// before its channels, so such a publish fails with ErrClosed or the
// socket's write error while the channel still looks open. A message the
// client itself refuses (a header type AMQP cannot carry, an ended
// context) fails on its own.
func TestChannelGoneTellsALostChannelFromARefusedMessage(t *testing.T) {
	writeErr := &net.OpError{Op: "write", Net: "tcp", Err: syscall.EPIPE}
	tests := []struct {
		name                 string
		err                  error
		chClosed, connClosed bool
		want                 bool
	}{
		{"ErrClosed while the channel still looks open", amqp.ErrClosed, false, false, true},
		{"socket write error while both look open", writeErr, false, false, true},
		{"closed TLS connection", fmt.Errorf("tls: %w", net.ErrClosed), false, false, true},
		{"peer hung up", io.EOF, false, false, true},
		{"connection already marked closed", errors.New("anything"), false, true, true},
		{"channel closed", errors.New("anything"), true, false, true},
		{"header type AMQP cannot carry", amqp.Table{"x": struct{}{}}.Validate(), false, false, false},
		{"context ended", context.Canceled, false, false, false},
	}
	for _, tt := range tests {
		if tt.err == nil {
			t.Fatalf("%s: no error to classify", tt.name)
		}
		if got := channelGone(tt.err, tt.chClosed, tt.connClosed); got != tt.want {
			t.Errorf("%s (%v): channelGone = %v, want %v", tt.name, tt.err, got, tt.want)
		}
	}
}
