package cli

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/replay"
)

// TestErrorLineNamesTheFlagThatMends: the engines name no flag; the
// command line's last word adds the one that mends a connection problem,
// however deep the error is wrapped, and nothing to other errors.
func TestErrorLineNamesTheFlagThatMends(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{fmt.Errorf("open: %w", broker.ErrEmptyURL), "open: bad broker URL: empty URL (set --url or PARKINGLOT_URL)"},
		{fmt.Errorf("%w: http://127.0.0.1:1 is not answering", broker.ErrNoManagement), "management API unavailable: http://127.0.0.1:1 is not answering (enable rabbitmq_management or pass --management-url)"},
		{fmt.Errorf("connect amqps://h:5671/: TLS: %w: x509: unknown authority", broker.ErrCertNotTrusted), "connect amqps://h:5671/: TLS: server certificate not trusted: x509: unknown authority (pass --tls-ca)"},
		{broker.ErrCertWithoutKey, "TLS files: client certificate and key go together: give both (--tls-cert and --tls-key)"},
		{errors.New("no queue \"x\"\nsecond line"), "no queue \"x\""},
	} {
		if got := errorLine(c.err); got != c.want {
			t.Errorf("errorLine(%q)\n got %q\nwant %q", c.err, got, c.want)
		}
	}
}

// TestErrorLineFitsANotDoneReason: a run's failure reason, however long or
// many-lined, is its first 300 cells on the one error line.
func TestErrorLineFitsANotDoneReason(t *testing.T) {
	reason := "upstream said:\n" + strings.Repeat("x", 400)
	got := errorLine(fmt.Errorf("replay: %w", &replay.NotAllDoneError{Failed: 2, Done: 3, Reason: reason, Mixed: true}))
	want := "replay: 2 message(s) not done, 3 done; the first: upstream said: " + strings.Repeat("x", 299-len("upstream said: ")) + "…"
	if got != want {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
	if !errors.Is(&replay.NotAllDoneError{}, replay.ErrNotAllDone) {
		t.Fatal("NotAllDoneError is not ErrNotAllDone")
	}
}
