package cli

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/replay"
	"github.com/parkinglot/parkinglot/retrycore"
)

// A replay whose copies were not routed, went to a missing exchange or
// were nacked exits 3, with a "not done" line a message giving the
// engine's reason. (replay's failures tests make the broker refuse them.)
func TestReplayNotDoneExit3(t *testing.T) {
	for _, reason := range []string{
		replay.ErrUnroutable.Error(),
		`exchange "no.such.exchange" does not exist in vhost "/"`,
		broker.ErrNacked.Error(),
	} {
		t.Run(reason, func(t *testing.T) {
			res := replay.Result{Failed: 3}
			for i := range 3 {
				res.Failures = append(res.Failures, replay.Failure{ID: fmt.Sprintf("m-%05d", i), Err: reason})
			}
			s := &fakeSession{replay: func(o replay.Options) (replay.Result, error) {
				if !o.Select.All || o.To == nil || o.To.Exchange != "ex" || o.To.RoutingKey != "nowhere" {
					t.Errorf("replay options %+v, --to %+v", o, o.To)
				}
				return res, nil
			}}
			f, b := fakeFactory(t, s)
			if code := run(context.Background(), f, []string{"replay", "orders.dlq", "--all", "--to", "ex:nowhere", "--yes"}); code != 3 {
				t.Fatalf("exit %d, want 3\nstdout %s\nstderr %s", code, b.out.String(), b.err.String())
			}
			for i := range 3 {
				if want := fmt.Sprintf("not done: m-%05d: %s\n", i, reason); !strings.Contains(b.out.String(), want) {
					t.Errorf("output lacks %q:\n%s", want, b.out.String())
				}
			}
		})
	}
}

// A queue that is not there ends every command in one line, exit 1.
// (replay's TestMissingQueueIsNotFound gets the engine's error.)
func TestMissingQueueIsOneLine(t *testing.T) {
	const q = "absent"
	noQueue := notFoundError(`no queue "` + q + `" in vhost "/"`)
	s := &fakeSession{
		browse: func(replay.BrowseOptions) (*replay.Browse, error) { return nil, noQueue },
		find: func(string, string) (broker.Message, replay.Summary, error) {
			return broker.Message{}, replay.Summary{}, noQueue
		},
		replay: func(replay.Options) (replay.Result, error) { return replay.Result{}, noQueue },
		delete: func(replay.DeleteOptions) (replay.Result, error) { return replay.Result{}, noQueue },
		export: func(replay.ExportOptions) (replay.Result, error) { return replay.Result{}, noQueue },
		// A run that failed counts what is left in the queue, which is
		// not there either.
		readyCount: func(string) (int, error) { return 0, noQueue },
	}
	for _, args := range [][]string{{"list", q}, {"show", q, "x"}, {"replay", q, "--all", "--yes"}, {"delete", q, "--all", "--yes"}, {"export", q}} {
		f, b := fakeFactory(t, s)
		if code := run(context.Background(), f, args); code != 1 {
			t.Errorf("%v: exit %d, want 1", args, code)
		}
		if want := `parkinglot: no queue "` + q + `" in vhost "/"` + "\n"; b.err.String() != want {
			t.Errorf("%v: stderr %q, want %q", args, b.err.String(), want)
		}
	}
}

// Usage errors exit 2 in one line, before anything is dialled.
func TestUsageErrorsExit2(t *testing.T) {
	const q = "any"
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"replay", q, "--yes"}, "choose the messages with --id, --all or --filter"},
		{[]string{"replay", q, "--all", "--id", "x", "--yes"}, "mutually exclusive"},
		{[]string{"replay", q, "--all", "--filter", "true", "--yes"}, "mutually exclusive"},
		{[]string{"replay", q, "--all", "--to", "no-colon", "--yes"}, "want EXCHANGE:ROUTING_KEY"},
		{[]string{"replay", q, "--all", "--to", "a:b", "--target", "queue", "--yes"}, "give one"},
		{[]string{"replay", q, "--all", "--target", "elsewhere", "--yes"}, "use origin or queue"},
		{[]string{"list", q, "--filter", "error =="}, "bad filter"},
		{[]string{"list", q, "--filter", "nosuchfield > 3"}, "unknown name nosuchfield"},
		{[]string{"delete", q, "--yes"}, "choose the messages"},
		{[]string{"export", q, "--remove"}, "--remove needs --file"},
		{[]string{"show", q}, "accepts 2 arg(s)"},
	} {
		f, b := testFactory(t)
		if code := run(context.Background(), f, tc.args); code != 2 {
			t.Errorf("%v: exit %d, want 2", tc.args, code)
		}
		if stderr := b.err.String(); !strings.Contains(stderr, tc.want) || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
			t.Errorf("%v: stderr %q, want one line with %q", tc.args, stderr, tc.want)
		}
	}
}

// Without the management API, list says so on stderr and the dry run
// says the route preview is unavailable. (replay's
// TestWithoutManagementAPIPreviewUnavailableRestWorks has the engine
// work without it.)
func TestWithoutManagementAPI(t *testing.T) {
	noAPI := fmt.Errorf("%w: GET http://127.0.0.1:1/api/overview: connection refused", broker.ErrNoManagement)
	s := &fakeSession{browse: func(o replay.BrowseOptions) (*replay.Browse, error) {
		o.OnBatch([]replay.Summary{{ID: "m-00000"}, {ID: "m-00001"}})
		return &replay.Browse{Management: noAPI}, nil
	}}
	f, b := fakeFactory(t, s)
	if code := run(context.Background(), f, []string{"list", "orders.dlq"}); code != 0 {
		t.Fatalf("list: exit %d\nstderr %s", code, b.err.String())
	}
	if !strings.Contains(b.out.String(), "m-00001") || !strings.Contains(b.err.String(), "management API unavailable") {
		t.Errorf("list without the API:\n%s\n%s", b.out.String(), b.err.String())
	}

	to := retrycore.Destination{RoutingKey: "dst"}
	s = &fakeSession{planEach: planOf(replay.Plan{
		Items:  []replay.PlanItem{{ID: "m-00000", Destination: to}, {ID: "m-00001", Destination: to}},
		Routes: []replay.RoutePreview{{Destination: to, Messages: 2, Err: "route preview unavailable: " + noAPI.Error(), Unavailable: noAPI}},
	})}
	f, b = fakeFactory(t, s)
	if code := run(context.Background(), f, []string{"replay", "orders.dlq", "--all", "--to", ":dst", "--dry-run"}); code != 0 {
		t.Fatalf("dry run: exit %d\nstderr %s", code, b.err.String())
	}
	if !strings.Contains(b.out.String(), "route preview unavailable") {
		t.Errorf("dry run without the API:\n%s\n%s", b.out.String(), b.err.String())
	}
	// The line `queues` ends with when the API is not there.
	if !strings.HasSuffix(errorLine(noAPI), "(enable rabbitmq_management or pass --management-url)") {
		t.Errorf("the error line %q does not say how to mend it", errorLine(noAPI))
	}
}
