package cli

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/parkinglot/parkinglot/replay"
)

// TestPublishFlags: the body, its content type, headers, ids and count
// reach the engine as given; a missing or doubled body, a bad header or
// count is a one-line usage error (exit 2) that publishes nothing; an
// unroutable message exits 1 saying so.
func TestPublishFlags(t *testing.T) {
	var got replay.PublishOptions
	ok := func(o replay.PublishOptions) (replay.PublishResult, error) {
		got = o
		ids := make([]string, o.Count)
		for i := range ids {
			ids[i] = fmt.Sprintf("%s-%d", o.MessageID, i+1)
		}
		return replay.PublishResult{Published: o.Count, IDs: ids}, nil
	}
	s := &fakeSession{publish: ok}
	f, b := fakeFactory(t, s)
	code := run(context.Background(), f, []string{"publish", "main.exchange", "payment.execute", "--body", `{"order": 4711}`, "--header", "tenant=acme", "--id", "o-4711", "--count", "2"})
	if code != ExitOK || got.Exchange != "main.exchange" || got.RoutingKey != "payment.execute" || string(got.Body) != `{"order": 4711}` ||
		got.ContentType != "application/json" || got.Headers["tenant"] != "acme" || got.MessageID != "o-4711" || got.Count != 2 {
		t.Fatalf("exit %d, engine got %+v (stderr %q)", code, got, b.err.String())
	}
	if out := b.out.String(); !strings.Contains(out, "published 2 message(s) to main.exchange → payment.execute (persistent, confirmed): o-4711-1, o-4711-2") {
		t.Errorf("output %q", out)
	}

	s = &fakeSession{publish: ok}
	f, _ = fakeFactory(t, s)
	if code := run(context.Background(), f, []string{"publish", "", "pay.queue", "--body", "plain words"}); code != ExitOK || got.ContentType != "text/plain" || !strings.HasPrefix(got.MessageID, "pl-") || got.Exchange != "" {
		t.Errorf("default exchange, text body: exit %d, %+v", code, got)
	}

	for _, args := range [][]string{
		{"publish", "x", "k"},
		{"publish", "x", "k", "--body", "a", "--file", "b"},
		{"publish", "x", "k", "--body", "a", "--header", "novalue"},
		{"publish", "x", "k", "--body", "a", "--count", "0"},
		{"publish", "x", "--body", "a"},
		{"publish", "x", "k", "--file", "/nonexistent/body.json"},
	} {
		s := &fakeSession{} // any call to the engine fails the test
		f, b := fakeFactory(t, s)
		if code := run(context.Background(), f, args); code != ExitUsage || strings.Count(strings.TrimSpace(b.err.String()), "\n") > 0 {
			t.Errorf("%q: exit %d, stderr %q; want %d in one line", args, code, b.err.String(), ExitUsage)
		}
	}

	s = &fakeSession{publish: func(o replay.PublishOptions) (replay.PublishResult, error) {
		return replay.PublishResult{}, fmt.Errorf("publish to exchange %q with routing key %q: %w (NO_ROUTE)", o.Exchange, o.RoutingKey, replay.ErrUnroutable)
	}}
	f, b = fakeFactory(t, s)
	if code := run(context.Background(), f, []string{"publish", "main.exchange", "nowhere", "--body", "{}"}); code != ExitError || !strings.Contains(b.err.String(), "unroutable") {
		t.Errorf("unroutable: exit %d, stderr %q", code, b.err.String())
	}
}
