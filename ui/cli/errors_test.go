package cli

import (
	"errors"
	"fmt"
	"testing"

	"github.com/parkinglot/parkinglot/broker"
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
