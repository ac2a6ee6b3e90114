package cli

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/replay"
	"github.com/parkinglot/parkinglot/retrycore"
)

// evil is producer text that would act on the operator's terminal: clear
// the screen, set the window title, ring the bell.
const evil = "\x1b[2J\x1b]0;owned\a"

// show, list and search print a producer's text (the id, every property,
// x-death's strings) escaped, Go-quoted as format.Name words names; -o
// json keeps the raw value, which JSON escapes itself.
func TestProducerTextReachesTheTerminalEscaped(t *testing.T) {
	const q = "orders.dlq"
	id := "m-4711" + evil
	m := broker.Message{Properties: broker.Properties{
		MessageID: id, ContentType: "text/plain" + evil, Type: "type" + evil, AppID: "app" + evil, ReplyTo: "reply" + evil,
		CorrelationID: "corr" + evil, UserID: "user" + evil, Expiration: "60000" + evil, ContentEncoding: "gzip" + evil,
	}, Headers: amqp.Table{
		"x-original-queue": "orders.process" + evil, "x-failure-kind": "kind" + evil,
		"x-death": []any{amqp.Table{"queue": "orders.process" + evil, "reason": "rejected" + evil, "count": int64(1),
			"exchange": "orders" + evil, "routing-keys": []any{"created" + evil}}},
	}, Body: []byte("hello")}
	sum := replay.Summarize(context.Background(), m, retrycore.OriginQuery{ParkingLot: q})
	sum.ID = id

	noEscape := func(t *testing.T, what, out string, want ...string) {
		t.Helper()
		if strings.ContainsAny(out, "\x1b\a") {
			t.Errorf("%s sends control characters to the terminal:\n%q", what, out)
		}
		for _, w := range want {
			if !strings.Contains(out, w) {
				t.Errorf("%s lacks %q:\n%s", what, w, out)
			}
		}
	}

	t.Run("show", func(t *testing.T) {
		s := &fakeSession{find: func(string, string) (broker.Message, replay.Summary, error) { return m, sum, nil }}
		f, b := fakeFactory(t, s)
		if code := run(context.Background(), f, []string{"show", q, "m-4711"}); code != 0 {
			t.Fatalf("exit %d, stderr %q", code, b.err.String())
		}
		esc := `\x1b[2J\x1b]0;owned\a"`
		noEscape(t, "show", b.out.String(), `Message   "m-4711`+esc, `type              "type`+esc, `app_id            "app`+esc,
			`reply_to          "reply`+esc, `correlation_id    "corr`+esc, `message_id        "m-4711`+esc)

		f, b = fakeFactory(t, &fakeSession{find: s.find})
		if code := run(context.Background(), f, []string{"-o", "json", "show", q, "m-4711"}); code != 0 {
			t.Fatalf("exit %d, stderr %q", code, b.err.String())
		}
		var v struct {
			Message struct {
				Properties struct {
					MessageID string `json:"message_id"`
					Type      string `json:"type"`
				} `json:"properties"`
			} `json:"message"`
		}
		if err := json.Unmarshal([]byte(b.out.String()), &v); err != nil || v.Message.Properties.MessageID != id || v.Message.Properties.Type != "type"+evil {
			t.Errorf("show -o json: %v, %+v; want the raw values", err, v)
		}
	})

	t.Run("list", func(t *testing.T) {
		browse := func(o replay.BrowseOptions) (*replay.Browse, error) {
			o.OnBatch([]replay.Summary{sum})
			return &replay.Browse{}, nil
		}
		f, b := fakeFactory(t, &fakeSession{browse: browse})
		if code := run(context.Background(), f, []string{"list", q}); code != 0 {
			t.Fatalf("exit %d, stderr %q", code, b.err.String())
		}
		noEscape(t, "list", b.out.String(), `"m-4711\x1b[2J\x1b]0;owned\a"`)

		f, b = fakeFactory(t, &fakeSession{browse: browse})
		if code := run(context.Background(), f, []string{"list", q, "-o", "json"}); code != 0 {
			t.Fatalf("exit %d, stderr %q", code, b.err.String())
		}
		var got replay.Summary
		if err := json.Unmarshal([]byte(b.out.String()), &got); err != nil || got.ID != id {
			t.Errorf("list -o json: %v, id %q; want the raw id", err, got.ID)
		}
	})

	t.Run("search", func(t *testing.T) {
		fake := &fakeSearcher{queues: map[string][]string{"a.dlq": {id}}}
		out, errOut, code := runSearch(t, fake, "search", "4711")
		if code != ExitOK {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		noEscape(t, "search", out, `"m-4711\x1b[2J\x1b]0;owned\a"`)

		out, _, code = runSearch(t, fake, "-o", "json", "search", "4711")
		var got replay.SearchMatch
		if err := json.Unmarshal([]byte(out), &got); code != ExitOK || err != nil || got.Summary.ID != id {
			t.Errorf("search -o json: exit %d, %v, id %q; want the raw id", code, err, got.Summary.ID)
		}
	})
}
