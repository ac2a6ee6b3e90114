package replay

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/user"
	"sync"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/broker/body"
)

// Session is one user's connection to a broker: a connection for consuming
// (browse passes), one for publishing (a resource alarm blocks publishing
// connections, and must not stall the acks of the consuming one), a lazily
// made management client, the config and a logger. Its methods may be called
// from several goroutines; each run opens its own channels.
type Session struct {
	conn Connection
	cfg  Config
	name string
	log  *slog.Logger

	// AuditPath is the audit log file; Open sets it from
	// PARKINGLOT_AUDIT_LOG or $XDG_STATE_HOME/parkinglot/audit.jsonl.
	AuditPath string
	// Reconnects bounds how many times one run re-dials a lost connection
	// and carries on.
	Reconnects int
	// Bodies reads bodies for filters and searches: the schemas and rules
	// of the config's decode and the flags (nil: by their properties).
	Bodies *body.Reader

	amqpUser string
	osUser   string

	mu      sync.Mutex
	consume *broker.Conn
	publish *broker.Conn
	mgmt    *broker.Management
	pending *pendingCheck // begun by Open; taken by the first Management
	// checked is the check mgmt passed; each later connection is held
	// against it too (live), with no request: a URL of a list that did
	// not answer the check may answer a redial.
	checked *broker.ManagementCheck
	mgmtErr error
	mgmtAt  time.Time // when mgmtErr was found; retried after mgmtRetry
	closed  bool
	dials   map[string]chan struct{} // per connection role: one dial at a time

	nodes connNodes // which node each connection is on (nodes.go)
}

// Open connects the consuming connection (so that a wrong URL, password or
// vhost is reported at once); the publishing connection and the management
// client are made when first needed. name prefixes the connection names
// shown in the management UI ("<name> consume", "<name> publish").
func Open(ctx context.Context, c Connection, cfg Config, name string, log *slog.Logger) (*Session, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if name == "" {
		name = "parkinglot"
	}
	s := &Session{conn: c, cfg: cfg, name: name, log: log, AuditPath: DefaultAuditPath(), Reconnects: 10}
	if uri, err := amqp.ParseURI(c.URL); err == nil {
		s.amqpUser = uri.Username
	}
	s.osUser = osUserName()
	s.startCheck()
	conn, err := broker.Dial(ctx, s.dialOptions("consume"))
	if err != nil {
		s.dropCheck()
		return nil, err
	}
	s.consume = conn
	return s, nil
}

// pendingCheck is the management check Open starts beside its dial, so
// that the check's requests (and a URL list's dials) do not add to the
// time before the first thing the session shows; Management takes it.
type pendingCheck struct {
	m      *broker.Management
	check  *broker.ManagementCheck
	cancel context.CancelFunc
}

// checkWait bounds a management check, as it bounds the probe.
const checkWait = 10 * time.Second

// startCheck begins the management check unless the connection allows a
// mismatch or names no management API.
func (s *Session) startCheck() {
	if s.conn.AllowManagementMismatch {
		return
	}
	m, err := s.conn.Management()
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), checkWait)
	s.pending = &pendingCheck{m: m, check: broker.StartManagementCheck(ctx, m, s.dialOptions("check")), cancel: cancel}
}

// takeCheck returns the pending check (nil when there is none), once.
func (s *Session) takeCheck() *pendingCheck {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.pending
	s.pending = nil
	return p
}

// dropCheck stops a pending check that nobody will take.
func (s *Session) dropCheck() {
	if p := s.takeCheck(); p != nil {
		p.cancel()
		p.m.Close()
	}
}

func osUserName() string {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	return os.Getenv("USER")
}

func (s *Session) dialOptions(role string) broker.Options {
	o := s.conn.Options(s.name + " " + role)
	o.Logger = s.log
	return o
}

// Close closes the connections and the management client.
func (s *Session) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	var errs []error
	for _, c := range []*broker.Conn{s.consume, s.publish} {
		if c != nil && !c.IsClosed() {
			if err := c.Close(); err != nil && !errors.Is(err, amqp.ErrClosed) {
				errs = append(errs, err)
			}
		}
	}
	if s.mgmt != nil {
		s.mgmt.Close()
	}
	if p := s.pending; p != nil {
		s.pending = nil
		p.cancel()
		p.m.Close()
	}
	return errors.Join(errs...)
}

// Describe is the redacted URL and vhost, for status bars.
func (s *Session) Describe() string {
	d := broker.Redact(s.conn.URL) + " vhost " + s.vhost()
	if s.conn.Context != "" {
		d = s.conn.Context + ": " + d
	}
	return d
}

func (s *Session) vhost() string {
	if s.conn.Vhost != "" {
		return s.conn.Vhost
	}
	return broker.Vhost(s.conn.URL)
}

// Config is the configuration the session was opened with.
func (s *Session) Config() Config { return s.cfg }

// mgmtRetry is how long a management API found unavailable is not asked
// again (a TUI session lives long; the API may come back).
const mgmtRetry = 30 * time.Second

// Management returns the management API client, checking that it answers
// and belongs to the cluster the session is connected to (within 10 s, or
// until ctx ends; see probeManagement). When it is not configured, not
// answering or of another cluster (that error also matches
// broker.ErrManagementMismatch) the error wraps broker.ErrNoManagement;
// features that need it say so, the rest works. The first call takes the
// check Open began. The session's lock is not held while the API is
// asked, so Close and other calls do not wait for it.
func (s *Session) Management(ctx context.Context) (*broker.Management, error) {
	s.mu.Lock()
	m, known, at, closed := s.mgmt, s.mgmtErr, s.mgmtAt, s.closed
	s.mu.Unlock()
	switch {
	case closed:
		return nil, noManagement(errSessionClosed)
	case m != nil:
		return m, nil
	case known != nil && (errors.Is(known, broker.ErrManagementMismatch) || time.Since(at) < mgmtRetry):
		return nil, known
	}
	var err error
	var k *broker.ManagementCheck
	if p := s.takeCheck(); p != nil {
		m, k = p.m, p.check
		err = s.againstConsume(ctx, k)
		p.cancel()
	} else if m, err = s.conn.Management(); err == nil {
		pctx, cancel := context.WithTimeout(ctx, checkWait)
		k, err = s.probeManagement(pctx, m)
		cancel()
	}
	if err != nil && m != nil {
		m.Close()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		err = noManagement(err)
		if ctx.Err() == nil { // an interrupted probe says nothing about the API
			s.mgmtErr, s.mgmtAt = err, time.Now()
		}
		return nil, err
	}
	if s.closed || s.mgmt != nil { // closed meanwhile, or another call won
		m.Close()
		if s.mgmt == nil {
			return nil, noManagement(errSessionClosed)
		}
		return s.mgmt, nil
	}
	s.mgmt, s.mgmtErr, s.checked = m, nil, k
	return m, nil
}

// probeManagement checks that m answers and, unless the connection allows
// a mismatch, that it belongs to the consuming connection's cluster
// (broker.StartManagementCheck: one request per management URL). A
// mismatch is kept for the session's life: the API is never used.
func (s *Session) probeManagement(ctx context.Context, m *broker.Management) (*broker.ManagementCheck, error) {
	if s.conn.AllowManagementMismatch {
		_, err := m.Overview(ctx)
		return nil, err
	}
	k := broker.StartManagementCheck(ctx, m, s.dialOptions("check"))
	return k, s.againstConsume(ctx, k)
}

// againstConsume is the check's answer for the consuming connection.
func (s *Session) againstConsume(ctx context.Context, k *broker.ManagementCheck) error {
	s.mu.Lock()
	c := s.consume
	s.mu.Unlock()
	if c == nil {
		return errSessionClosed
	}
	return k.Against(ctx, c)
}

// CheckManagement returns the *broker.ManagementMismatchError when the
// management API belongs to another cluster than the session's AMQP
// connection (see Management), and nil otherwise, also when there is no
// management API to check.
func (s *Session) CheckManagement(ctx context.Context) error {
	_, err := s.Management(ctx)
	if errors.Is(err, broker.ErrManagementMismatch) {
		return err
	}
	return nil
}

var errSessionClosed = errors.New("session is closed")

func noManagement(err error) error {
	if errors.Is(err, broker.ErrNoManagement) {
		return err
	}
	return fmt.Errorf("%w: %w", broker.ErrNoManagement, err)
}

// optionalManagement is the management client or nil, for features that
// work without it (origin via delay queues and route previews say so).
func (s *Session) optionalManagement(ctx context.Context) *broker.Management {
	m, err := s.Management(ctx)
	if err != nil {
		return nil
	}
	return m
}

// consumer returns the consuming connection, re-dialling it when it was
// lost.
func (s *Session) consumer(ctx context.Context) (*broker.Conn, error) {
	return s.live(ctx, &s.consume, "consume")
}

// publisherConn returns the publishing connection, dialling it when first
// needed or after it was lost.
func (s *Session) publisherConn(ctx context.Context) (*broker.Conn, error) {
	return s.live(ctx, &s.publish, "publish")
}

func (s *Session) live(ctx context.Context, slot **broker.Conn, role string) (*broker.Conn, error) {
	// One dial per connection at a time, waited for only as long as ctx
	// lasts; s.mu is held only to read and set the slot, never through a
	// dial (up to 60 s), so Close and Management do not wait for one.
	dial := s.dialing(role)
	select {
	case dial <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-dial }()
	s.mu.Lock()
	c, closed := *slot, s.closed
	s.mu.Unlock()
	if closed {
		return nil, errSessionClosed
	}
	if c != nil && !c.IsClosed() {
		return c, nil
	}
	rctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	c, err := broker.Redial(rctx, s.dialOptions(role), broker.Backoff{Initial: 100 * time.Millisecond, Max: 5 * time.Second})
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	k := s.checked
	s.mu.Unlock()
	if k != nil {
		if err := k.Against(ctx, c); errors.Is(err, broker.ErrManagementMismatch) {
			_ = c.Close()
			return nil, err
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed { // closed while dialling
		_ = c.Close()
		return nil, errSessionClosed
	}
	*slot = c
	return c, nil
}

// dialing is the one-slot semaphore of a connection's dials.
func (s *Session) dialing(role string) chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dials == nil {
		s.dials = map[string]chan struct{}{}
	}
	ch, ok := s.dials[role]
	if !ok {
		ch = make(chan struct{}, 1)
		s.dials[role] = ch
	}
	return ch
}

// checkQueue reports a missing queue in one line (`no queue "x" in vhost
// "/"`) before a pass is opened on it.
func (s *Session) checkQueue(ctx context.Context, conn *broker.Conn, queue string) error {
	if queue == "" {
		return errors.New("no queue given")
	}
	ch, err := conn.Channel()
	if err != nil {
		return fmt.Errorf("open channel: %w", broker.Explain(err))
	}
	_, err = ch.QueueDeclarePassive(queue,
		false, // durable (ignored when passive)
		false, // autoDelete
		false, // exclusive
		false, // noWait
		nil)
	if err == nil {
		_ = ch.Close()
		return nil
	}
	err = broker.Explain(err)
	if errors.Is(err, broker.ErrNotFound) {
		return &sentinelError{kind: broker.ErrNotFound, msg: fmt.Sprintf("no queue %q in vhost %q", queue, s.vhost())}
	}
	return err
}

// sentinelError is a one-line message that still matches a sentinel.
type sentinelError struct {
	kind error
	msg  string
}

func (e *sentinelError) Error() string { return e.msg }
func (e *sentinelError) Unwrap() error { return e.kind }

// openPass checks the queue and opens a browse pass on the consuming
// connection.
func (s *Session) openPass(ctx context.Context, queue string, limit int) (*broker.Pass, error) {
	return s.openPassWith(ctx, broker.PassOptions{Queue: queue, Limit: limit})
}

// openPassWith is openPass with the pass's options (Management and Logger
// are the session's).
func (s *Session) openPassWith(ctx context.Context, o broker.PassOptions) (*broker.Pass, error) {
	queue := o.Queue
	for attempt := 1; ; attempt++ {
		conn, err := s.consumer(ctx)
		if err != nil {
			return nil, err
		}
		if err = s.checkQueue(ctx, conn, queue); err == nil {
			var p *broker.Pass
			o.Management, o.Logger = s.optionalManagement(ctx), s.log
			p, err = broker.OpenPass(ctx, conn, o)
			if err == nil {
				return p, nil
			}
		}
		// A connection lost before the pass began (its node stopping, say)
		// held nothing: dial again, to the next node of a URL list, once.
		if attempt > 1 || !conn.IsClosed() || ctx.Err() != nil {
			return nil, err
		}
		s.log.Debug("connection lost before the pass began; dialling again", "queue", queue, "err", err)
	}
}
