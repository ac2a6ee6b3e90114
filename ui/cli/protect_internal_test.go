package cli

import (
	"context"
	"strings"
	"testing"

	"github.com/parkinglot/parkinglot/broker"
)

// What protect says and how it exits when no policy is put: a queue that
// is safe as it is has nothing to do (0); one whose limit no policy can
// lift says why in one line (1), and the engine is asked to change
// nothing.
func TestProtectRefusalsAndNothingToDo(t *testing.T) {
	limit := broker.DeliveryLimit{Limit: 20, Source: "RabbitMQ 4.3.6 default"}
	for _, c := range []struct {
		why  broker.LiftRefusal
		code int
		out  string // on stdout (0) or stderr (1)
	}{
		{broker.LiftAlreadyUnlimited, ExitOK, "nothing to do"},
		{broker.LiftNotQuorum, ExitOK, "not a quorum queue"},
		{broker.LiftOldBroker, ExitError, "refuses -1 in a policy"},
		{broker.LiftArgument, ExitError, "no policy lifts it"},
		{broker.LiftOperatorPolicy, ExitError, "administrator"},
	} {
		s := &fakeSession{planProtect: func(q string) (broker.LiftPlan, error) {
			return broker.LiftPlan{}, &broker.LiftError{Queue: q, Why: c.why, Limit: limit, Server: broker.ParseVersion("4.3.6")}
		}}
		f, b := fakeFactory(t, s)
		code := run(context.Background(), f, []string{"protect", "pay.dlq", "--yes"})
		text := b.out.String()
		if code != ExitOK {
			text = b.err.String()
		}
		if code != c.code || !strings.Contains(text, c.out) || strings.Count(strings.TrimSpace(text), "\n") > 0 {
			t.Errorf("%s: exit %d, %q; want %d and one line with %q", c.why, code, text, c.code, c.out)
		}
	}
}
