package cli

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/replay"
	"github.com/parkinglot/parkinglot/ui/iostreams"
)

func TestRefuseMismatch(t *testing.T) {
	pair := &broker.ManagementMismatchError{AMQP: "amqp://guest:xxxxx@127.0.0.1:5681/", AMQPCluster: "rabbitc1@vm",
		Management: "http://127.0.0.1:15672", ManagementCluster: "rabbit@vm", ManagementNodes: []string{"rabbit@localhost"}}
	amqpList := *pair
	amqpList.Kind, amqpList.Connected, amqpList.AMQP, amqpList.AMQPCluster = broker.MismatchAMQPList, "amqp://guest:xxxxx@127.0.0.1:5681/", "amqp://guest:xxxxx@127.0.0.1:5674/", "rabbit43@vm"
	mgmtList := *pair
	mgmtList.Kind, mgmtList.OtherManagement, mgmtList.OtherCluster = broker.MismatchManagementList, "http://127.0.0.1:15674", "rabbit43@vm"
	for _, tc := range []struct {
		err  error
		want []string
	}{
		{pair, []string{"http://127.0.0.1:15672", "rabbit@vm", "rabbit@localhost", "127.0.0.1:5681", "rabbitc1@vm", "--management-url", "management_url", "--allow-management-mismatch"}},
		{&amqpList, []string{"two clusters", "127.0.0.1:5681", "127.0.0.1:5674", "rabbit43@vm", "--url"}},
		{&mgmtList, []string{"two clusters", "http://127.0.0.1:15672", "http://127.0.0.1:15674", "rabbit43@vm", "--management-url"}},
	} {
		// As it reaches the root: wrapped by the feature that met it.
		err := refuseMismatch(fmt.Errorf("list queues: %w: %w", broker.ErrNoManagement, tc.err))
		if ExitCode(err) != ExitUsage || !errors.Is(err, broker.ErrManagementMismatch) {
			t.Errorf("%v: exit %d, want %d", err, ExitCode(err), ExitUsage)
		}
		msg := err.Error()
		if strings.Contains(msg, "\n") || strings.HasPrefix(msg, "list queues") {
			t.Errorf("not one worded line: %q", msg)
		}
		for _, w := range tc.want {
			if !strings.Contains(msg, w) {
				t.Errorf("%q does not say %s", msg, w)
			}
		}
		if again := refuseMismatch(err); again.Error() != msg {
			t.Errorf("worded twice: %q", again)
		}
	}
	if other := errors.New("boom"); refuseMismatch(other) != other {
		t.Error("another error was changed")
	}
}

func TestManagementNotices(t *testing.T) {
	for _, tc := range []struct {
		name string
		conn replay.Connection
		want []string // lines on stderr; none: nothing
	}{
		{"the default port", replay.Connection{URL: "amqp://u:secret@h:5672/", ManagementAssumed: true}, nil},
		{"a management URL given", replay.Connection{URL: "amqp://u:secret@h:5681/"}, nil},
		{"another port", replay.Connection{URL: "amqp://u:secret@h:5681/", ManagementAssumed: true},
			[]string{"parkinglot: no management URL given: assuming http://u:xxxxx@h:15672 for amqp://u:xxxxx@h:5681/ (set --management-url or the context's management_url if that is not the same broker)"}},
		{"a list, each paired", replay.Connection{URL: "amqp://u:secret@h1:5672/,amqp://u:secret@h2:5673/", ManagementAssumed: true},
			[]string{"parkinglot: no management URL given: assuming http://u:xxxxx@h1:15672 for amqp://u:xxxxx@h1:5672/, http://u:xxxxx@h2:15672 for amqp://u:xxxxx@h2:5673/ (set --management-url or the context's management_url if that is not the same broker)"}},
		{"the override", replay.Connection{URL: "amqp://u:secret@h:5672/", AllowManagementMismatch: true},
			[]string{"parkinglot: --allow-management-mismatch: the management API is used without checking that it belongs to the AMQP broker's cluster"}},
	} {
		streams, _, _, errOut := iostreams.Test()
		f := NewFactory(streams)
		f.Conn = tc.conn
		f.managementNotices()
		got := strings.Split(strings.TrimSuffix(errOut.String(), "\n"), "\n")
		if errOut.Len() == 0 {
			got = nil
		}
		if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
			t.Errorf("%s: stderr\n%q\nwant\n%q", tc.name, got, tc.want)
		}
	}
}
