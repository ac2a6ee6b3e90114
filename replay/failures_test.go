//go:build integration

package replay_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/broker/brokertest"
	"github.com/parkinglot/parkinglot/replay"
)

func parkPlain(t testing.TB, ch *amqp.Channel, queue string, n int) {
	t.Helper()
	publishN(t, ch, "", queue, n, func(i int) amqp.Publishing {
		return amqp.Publishing{MessageId: idOf(i), Body: []byte("body " + idOf(i)), DeliveryMode: amqp.Persistent,
			Headers: amqp.Table{"x-last-error": "boom"}}
	})
}

// An exchange with no binding for the key: every copy comes back as
// basic.return, nothing is removed, exit 3 with one line per message.
func TestReplayUnroutableLeavesMessagesParkedExit3(t *testing.T) {
	ch := brokertest.Channel(t)
	q := brokertest.Name(t, "dlq")
	ex := brokertest.Name(t, "nobody.bound")
	brokertest.DeclareQueue(t, ch, q, nil)
	brokertest.DeclareExchange(t, ch, ex, "direct")
	parkPlain(t, ch, q, 3)

	c := newCLI(t)
	r := c.must(3, "", "replay", q, "--all", "--to", ex+":nowhere", "--yes")
	for i := range 3 {
		if !strings.Contains(r.stdout, "not done: "+idOf(i)+": ") || !strings.Contains(r.stdout, "unroutable") {
			t.Errorf("output lacks the unroutable line for %s:\n%s", idOf(i), r.stdout)
		}
	}
	brokertest.WaitDepth(t, q, 3, 15*time.Second)
	for _, e := range auditEntries(t, c.audit) {
		if e.Result != "unroutable" {
			t.Errorf("audit entry %+v: want result unroutable", e)
		}
	}
}

// A missing exchange is one clear line per message and loses nothing.
func TestReplayMissingExchangeIsClearAndLosesNothing(t *testing.T) {
	ch := brokertest.Channel(t)
	q := brokertest.Name(t, "dlq")
	brokertest.DeclareQueue(t, ch, q, nil)
	parkPlain(t, ch, q, 2)
	missing := brokertest.Name(t, "no.such.exchange")

	c := newCLI(t)
	r := c.must(3, "", "replay", q, "--all", "--to", missing+":rk", "--yes")
	want := `exchange "` + missing + `" does not exist in vhost "/"`
	if strings.Count(r.stdout, want) != 2 {
		t.Errorf("want %q once per message:\n%s", want, r.stdout)
	}
	if strings.Contains(r.stdout+r.stderr, "Exception") || strings.Contains(r.stdout+r.stderr, "NOT_FOUND") {
		t.Errorf("raw broker error shown:\n%s%s", r.stdout, r.stderr)
	}
	brokertest.WaitDepth(t, q, 2, 15*time.Second)
}

// A destination queue that refuses publishes (full, reject-publish): the
// broker nacks, the message stays parked, exit 3.
func TestReplayNackedByFullQueueStaysParked(t *testing.T) {
	ch := brokertest.Channel(t)
	q := brokertest.Name(t, "dlq")
	full := brokertest.Name(t, "full")
	brokertest.DeclareQueue(t, ch, q, nil)
	brokertest.DeclareQueue(t, ch, full, amqp.Table{"x-max-length": int32(1), "x-overflow": "reject-publish"})
	brokertest.Publish(t, ch, "", full, amqp.Publishing{Body: []byte("filler")})
	parkPlain(t, ch, q, 2)

	s, _ := openSession(t, replay.Config{})
	res, err := s.Replay(testCtx(t, 60*time.Second), replay.Options{Queue: q, Select: replay.Selector{All: true}, To: dest("", full)})
	if err != nil {
		t.Fatal(err)
	}
	if res.Done != 0 || res.Failed != 2 || !errors.Is(res.Err(), replay.ErrNotAllDone) {
		t.Fatalf("result %+v: want 2 failed", res)
	}
	for _, f := range res.Failures {
		if !strings.Contains(f.Err, broker.ErrNacked.Error()) {
			t.Errorf("failure %+v: want the nack reason", f)
		}
	}
	brokertest.WaitDepth(t, q, 2, 15*time.Second)
	brokertest.WaitDepth(t, full, 1, 15*time.Second)

	c := newCLI(t)
	c.must(3, "", "replay", q, "--all", "--to", ":"+full, "--yes")
	brokertest.WaitDepth(t, q, 2, 15*time.Second)
}

func TestReplayMissingQueueIsOneLine(t *testing.T) {
	c := newCLI(t)
	q := brokertest.Name(t, "absent")
	for _, args := range [][]string{{"list", q}, {"show", q, "x"}, {"replay", q, "--all", "--yes"}, {"delete", q, "--all", "--yes"}, {"export", q}} {
		r := c.must(1, "", args...)
		want := `parkinglot: no queue "` + q + `" in vhost "/"`
		if strings.TrimSpace(r.stderr) != want {
			t.Errorf("%v: stderr %q, want %q", args, r.stderr, want)
		}
	}
}

func TestCLIUsageErrorsExit2(t *testing.T) {
	c := newCLI(t)
	q := brokertest.Name(t, "any")
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
		r := c.must(2, "", tc.args...)
		if !strings.Contains(r.stderr, tc.want) || strings.Count(strings.TrimSpace(r.stderr), "\n") > 0 {
			t.Errorf("%v: stderr %q, want one line with %q", tc.args, r.stderr, tc.want)
		}
	}
}

// Without the management API the commands that can work do, and say what
// is missing: the route preview is unavailable, queues needs it.
func TestWithoutManagementAPIPreviewUnavailableRestWorks(t *testing.T) {
	ch := brokertest.Channel(t)
	q := brokertest.Name(t, "dlq")
	dst := brokertest.Name(t, "dst")
	brokertest.DeclareQueue(t, ch, q, nil)
	brokertest.DeclareQueue(t, ch, dst, nil)
	parkPlain(t, ch, q, 2)
	c := newCLI(t)
	c.Env = append(c.Env, "PARKINGLOT_MANAGEMENT_URL=http://guest:guest@127.0.0.1:1")
	r := c.must(0, "", "list", q)
	if !strings.Contains(r.stdout, idOf(1)) || !strings.Contains(r.stderr, "management API unavailable") {
		t.Errorf("list without the API:\n%s\n%s", r.stdout, r.stderr)
	}
	r = c.must(0, "", "replay", q, "--all", "--to", ":"+dst, "--dry-run")
	if !strings.Contains(r.stdout, "route preview unavailable") || strings.Contains(r.stdout+r.stderr, "guest:guest") {
		t.Errorf("dry run without the API:\n%s\n%s", r.stdout, r.stderr)
	}
	c.must(0, "", "replay", q, "--all", "--to", ":"+dst, "--yes")
	brokertest.WaitDepth(t, dst, 2, 15*time.Second)
	r = c.must(1, "", "queues")
	if !strings.Contains(r.stderr, "management API unavailable") {
		t.Errorf("queues without the API: %q", r.stderr)
	}
}
