package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parkinglot/parkinglot/replay"
	"github.com/parkinglot/parkinglot/retrycore"
)

// edit on a terminal asks before sending, naming where the copy goes:
// --to, the failed queue alone for --target queue, else the origin; and
// the engine is told the same.
func TestEditAsksWithTheDestinationTheCopyGoesTo(t *testing.T) {
	origin := &retrycore.Origin{Destination: retrycore.Destination{Exchange: "orders.exchange", RoutingKey: "order.created"},
		Source: retrycore.SourceOriginalHeaders, Queue: "orders.process"}
	for _, tc := range []struct {
		name   string
		flags  []string
		origin *retrycore.Origin
		want   string
		absent string
	}{
		{"to", []string{"--to", "audit.exchange:order.replayed"}, origin,
			"→ audit.exchange → order.replayed  (the destination given)\n", "orders.exchange"},
		{"target queue", []string{"--target", "queue"}, origin,
			"→ (default) → orders.process  (the queue it failed in)\n", "orders.exchange"},
		{"target queue, failed queue unknown", []string{"--target", "queue"},
			&retrycore.Origin{Destination: origin.Destination, Source: origin.Source},
			"→ ? (the queue it failed in is not known; it would stay parked)\n", "orders.exchange"},
		{"origin", nil, origin, "→ orders.exchange → order.created  (x-original-exchange)\n", "orders.process"},
		{"to, an escape in the id", []string{"--to", "a:b"}, origin, "replay the edited \"order-7\\x1b[2J\" ", "\x1b"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id := "order-7"
			if strings.Contains(tc.name, "escape") {
				id = "order-7\x1b[2J"
			}
			var body []byte
			var got replay.Options
			s := editSession(t, t.TempDir(), &body)
			prepare, finish := s.prepareEdit, s.finishEdit
			s.prepareEdit = func(queue, _ string) (*replay.EditDraft, error) {
				d, err := prepare(queue, "order-7")
				if d != nil {
					d.ID, d.Summary.ID, d.Summary.Origin = id, id, tc.origin
				}
				return d, err
			}
			s.finishEdit = func(d *replay.EditDraft, o replay.Options) (replay.Result, error) {
				got = o
				return finish(d, o)
			}
			f, b := fakeFactory(t, s)
			editor := editorScript(t, `{"amount":12.5}`)
			t.Setenv("VISUAL", "")
			t.Setenv("EDITOR", editor)
			f.Getenv = func(k string) string { return map[string]string{"EDITOR": editor}[k] }
			f.IOStreams.SetTerminal(true, 80)
			// A file, not a buffer: the editor inherits it and leaves the
			// answer to the prompt.
			answer := filepath.Join(t.TempDir(), "answer")
			if err := os.WriteFile(answer, []byte("y\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			in, err := os.Open(answer)
			if err != nil {
				t.Fatal(err)
			}
			defer in.Close()
			f.IOStreams.In = in
			args := append([]string{"edit", "orders.dlq", id}, tc.flags...)
			if code := run(context.Background(), f, args); code != 0 {
				t.Fatalf("exit %d\nstdout %s\nstderr %s", code, b.out.String(), b.err.String())
			}
			prompt, _, _ := strings.Cut(b.out.String(), "proceed?")
			if !strings.Contains(prompt, tc.want) || strings.Contains(prompt, tc.absent) {
				t.Errorf("prompt %q: want %q, without %q", prompt, tc.want, tc.absent)
			}
			if string(body) != `{"amount":12.5}` {
				t.Errorf("FinishEdit got %q", body)
			}
			if tc.flags != nil && tc.flags[0] == "--to" && got.To == nil || tc.flags != nil && tc.flags[0] == "--target" && got.Target != replay.TargetQueue {
				t.Errorf("FinishEdit got To %v, Target %q; want what %v says", got.To, got.Target, tc.flags)
			}
		})
	}
}
