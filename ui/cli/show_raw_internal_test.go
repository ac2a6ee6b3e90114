package cli

import (
	"context"
	"strings"
	"testing"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/replay"
)

// TestShowRawWritesTheBodyByteForByte: `show --raw` writes the body and
// nothing else, control bytes, invalid UTF-8 and NULs as they are (a gzip
// or protobuf body piped to its decoder), where `show` escapes them.
func TestShowRawWritesTheBodyByteForByte(t *testing.T) {
	body := []byte{0x1f, 0x8b, 0x08, 0x00, 0xff, 0xfe, '\n', 0x1b, '[', '2', 'J', 0x00}
	m := broker.Message{Body: body}
	m.Properties.MessageID = "gz-1"
	s := &fakeSession{find: func(string, string) (broker.Message, replay.Summary, error) {
		return m, replay.Summary{ID: "gz-1"}, nil
	}}
	f, b := fakeFactory(t, s)
	if code := run(context.Background(), f, []string{"show", "pay.dlq", "gz-1", "--raw"}); code != ExitOK || b.out.String() != string(body) {
		t.Fatalf("exit %d, stdout %q; want the body's %d bytes alone", code, b.out.String(), len(body))
	}
	s2 := &fakeSession{find: s.find}
	f, b = fakeFactory(t, s2)
	if code := run(context.Background(), f, []string{"show", "pay.dlq", "gz-1"}); code != ExitOK || strings.Contains(b.out.String(), "\x1b") {
		t.Errorf("show without --raw: exit %d, an escape byte reached the terminal: %q", code, b.out.String())
	}
}
