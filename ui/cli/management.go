package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker"
)

// The management API must belong to the broker the AMQP connection is on,
// or its facts (delivery limits, routes) would be another cluster's: every
// command that uses both checks it once
// (broker.CheckManagement) and refuses a mismatch, exit 2, unless
// --allow-management-mismatch.

// mismatchFlag is the override's name, said in the refusal and the notice.
const mismatchFlag = "--allow-management-mismatch"

// checkWait bounds checkedManagement, as replay bounds its check.
const checkWait = 10 * time.Second

// managementNotices says on stderr, once, before any command runs: that
// the override is in force, and which management URL was assumed when none
// was given and an AMQP port is not 5672 (so the assumed
// http://<host>:15672 may well be another broker's).
func (f *Factory) managementNotices() {
	if f.Conn.AllowManagementMismatch {
		f.say(slog.LevelWarn, mismatchFlag+": the management API is used without checking that it belongs to the AMQP broker's cluster")
	}
	if !f.Conn.ManagementAssumed {
		return
	}
	urls := broker.SplitURLs(f.Conn.URL)
	mgmt := broker.AssumedManagementURLs(f.Conn.URL)
	unusual := false
	pairs := make([]string, len(urls))
	for i, u := range urls {
		if uri, err := amqp.ParseURI(u); err == nil && uri.Port != 5672 {
			unusual = true
		}
		pairs[i] = broker.Redact(mgmt[i]) + " for " + broker.Redact(u)
	}
	if unusual {
		f.say(slog.LevelInfo, "no management URL given: assuming "+strings.Join(pairs, ", ")+" (set --management-url or the context's management_url if that is not the same broker)")
	}
}

// refuseMismatch words a management API of another cluster for people:
// one line naming both sides and how to mend it; a usage error (exit 2),
// since the command line or the config paired them. Other errors pass.
func refuseMismatch(err error) error {
	var mm *broker.ManagementMismatchError
	var worded *mismatchError
	if !errors.As(err, &mm) || errors.As(err, &worded) {
		return err
	}
	nodes := func(ns []string) string {
		if len(ns) == 0 {
			return ""
		}
		return ", nodes " + strings.Join(ns, " ")
	}
	mgmt := fmt.Sprintf("%s (cluster %s%s)", mm.Management, mm.ManagementCluster, nodes(mm.ManagementNodes))
	fix := "; pass --management-url for the AMQP broker's cluster (or set the context's management_url), or " + mismatchFlag + " if this is deliberate"
	var msg string
	switch mm.Kind {
	case broker.MismatchManagementList:
		msg = fmt.Sprintf("the management URLs are two clusters: %s and %s (cluster %s); give the management URLs of one cluster in --management-url (or the context's management_url)", mgmt, mm.OtherManagement, mm.OtherCluster)
	case broker.MismatchAMQPList:
		msg = fmt.Sprintf("the AMQP URLs are two clusters: %s is in the cluster of the management API %s, %s (cluster %s) is not; list the nodes of one cluster in --url (or the context's url)", mm.Connected, mgmt, mm.AMQP, mm.AMQPCluster)
	default:
		msg = fmt.Sprintf("the management API %s is not the broker of %s (cluster %s)%s", mgmt, mm.AMQP, mm.AMQPCluster, fix)
	}
	return &UsageError{&mismatchError{msg: msg, err: err}}
}

// mismatchError is the worded refusal; it still matches the engine's error.
type mismatchError struct {
	msg string
	err error
}

func (e *mismatchError) Error() string { return e.msg }
func (e *mismatchError) Unwrap() error { return e.err }

// checkedManagement is the management client for a command that hands it
// to an engine with its own connections (daemon, topology, demo): nil when
// none is configured, none answers or the broker cannot be dialled now (the
// engine works without, and dials itself), and an error when it belongs to
// another cluster than the AMQP URL's; with the client, the check it
// passed, which the daemon holds each of its connections against. The
// check dials one connection of its own (closed at once), beside its
// requests.
func (f *Factory) checkedManagement(ctx context.Context, name string) (*broker.Management, *broker.ManagementCheck, error) {
	m, err := f.Conn.Management()
	if err != nil {
		return nil, nil, nil
	}
	if f.Conn.AllowManagementMismatch {
		return m, nil, nil
	}
	opts := f.Conn.Options(name + " check")
	opts.Logger = f.Log
	ctx, cancel := context.WithTimeout(ctx, checkWait)
	defer cancel()
	k := broker.StartManagementCheck(ctx, m, opts)
	c, err := broker.Dial(ctx, opts)
	if err != nil { // the engine dials (and says why it cannot) itself
		m.Close()
		return nil, nil, nil
	}
	defer func() { _ = c.Close() }()
	err = k.Against(ctx, c)
	switch {
	case errors.Is(err, broker.ErrManagementMismatch):
		m.Close()
		return nil, nil, refuseMismatch(err)
	case err != nil:
		m.Close()
		f.Log.Debug("management API unavailable", "err", err)
		return nil, nil, nil
	}
	return m, k, nil
}
