package broker

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strings"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// TLSFiles names the PEM files for an amqps:// connection.
type TLSFiles struct {
	CA   string // CA bundle that signed the server certificate
	Cert string // client certificate (for mutual TLS)
	Key  string // client key
	// InsecureSkipVerify disables server certificate checks. Only an explicit
	// flag sets it, and Dial logs a warning whenever it is used.
	InsecureSkipVerify bool
}

// Options say where and how to connect.
type Options struct {
	// URL is one AMQP URL, or several nodes of one cluster separated by
	// commas (see SplitURLs and Dial).
	URL  string
	TLS  TLSFiles
	Name string // connection_name shown in the management UI
	// Heartbeat defaults to 10s so that a dead peer is noticed quickly.
	Heartbeat time.Duration
	Logger    *slog.Logger
}

// Conn is an open AMQP connection with the facts parkinglot needs about it.
type Conn struct {
	*amqp.Connection
	URL           string // redacted; the one URL of the list this connection was made to
	Vhost         string
	User          string // the user name in URL
	ServerVersion Version
	// ID is a random id Dial puts in the client properties
	// (parkinglot_connection_id), by which Management.NodeOf finds the
	// connection when a proxy or NAT hides its addresses.
	ID string
	// Endpoint is URL's position in the list Dial was given (0-based), and
	// Endpoints the list's length (1 for a single URL).
	Endpoint, Endpoints int
	// sock is the TCP connection under it, closed to drop the connection
	// when the broker does not answer a close (close.go).
	sock net.Conn
}

// clientIDProperty is the client property that carries Conn.ID.
const clientIDProperty = "parkinglot_connection_id"

// Dial opens one AMQP connection. It does not retry: see Redial.
//
// When opts.URL lists several URLs (nodes of one cluster), Dial tries them
// one after the other and returns the first connection that opens; each
// URL is dialled with its own host as the TLS server name. The first URL
// tried is a random one the first time this process dials the list, then
// the one that answered last, or the one after a URL whose connection was
// lost (see endpoints.go for why). When none opens, the error names every
// URL (redacted) with its reason, and is Permanent if any reason is.
func Dial(ctx context.Context, opts Options) (*Conn, error) {
	urls, uris, err := ParseURLs(opts.URL)
	if err != nil {
		return nil, err
	}
	if len(urls) == 1 {
		c, err := dialOne(ctx, opts, urls[0], uris[0])
		if err == nil {
			c.Endpoints = 1
		}
		return c, err
	}
	eps := endpointsOf(opts.URL, urls)
	var errs []error
	for _, i := range eps.order() {
		c, err := dialOne(ctx, opts, urls[i], uris[i])
		if err == nil {
			eps.connected(i)
			c.Endpoint, c.Endpoints = i, len(urls)
			closed := c.NotifyClose(make(chan *amqp.Error, 1))
			go func() {
				if e := <-closed; e != nil { // lost, not closed by us
					eps.lost(i)
				}
			}()
			return c, nil
		}
		errs = append(errs, err)
		if opts.Logger != nil {
			opts.Logger.Debug("broker unreachable, trying the next", "url", Redact(urls[i]), "err", err)
		}
		if ctx.Err() != nil {
			break
		}
	}
	return nil, &listError{n: len(urls), errs: errs}
}

// listError is the failure of every URL of a list.
type listError struct {
	n    int
	errs []error
}

func (e *listError) Error() string {
	msgs := make([]string, len(e.errs))
	for i, err := range e.errs {
		msgs[i] = err.Error()
	}
	return fmt.Sprintf("none of the %d brokers answered: %s", e.n, strings.Join(msgs, "; "))
}

func (e *listError) Unwrap() []error { return e.errs }

// dialOne opens a connection to one URL.
func dialOne(ctx context.Context, opts Options, raw string, uri amqp.URI) (*Conn, error) {
	cfg := amqp.Config{
		Heartbeat:  opts.Heartbeat,
		Locale:     "en_US",
		Properties: amqp.NewConnectionProperties(),
	}
	if cfg.Heartbeat == 0 {
		cfg.Heartbeat = 10 * time.Second
	}
	name := opts.Name
	if name == "" {
		name = "parkinglot"
	}
	cfg.Properties.SetClientConnectionName(name)
	id := newConnID()
	cfg.Properties[clientIDProperty] = id
	if uri.Scheme == "amqps" {
		// Each URL's own host: amqp091-go would also take it from the URL,
		// but only when ServerName is empty, and this config is per URL.
		tc, err := opts.TLS.Config(uri.Host)
		if err != nil {
			return nil, err
		}
		if opts.TLS.InsecureSkipVerify && opts.Logger != nil {
			opts.Logger.Warn("TLS certificate verification is disabled", "url", Redact(raw))
		}
		cfg.TLSClientConfig = tc
	}
	dialer := &net.Dialer{Timeout: 10 * time.Second}
	var sock net.Conn
	cfg.Dial = func(network, addr string) (net.Conn, error) {
		c, err := dialer.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		sock = c
		// Bound the handshake; amqp091-go clears the deadline once open.
		if err := c.SetDeadline(time.Now().Add(15 * time.Second)); err != nil {
			_ = c.Close()
			return nil, err
		}
		return c, nil
	}
	conn, err := amqp.DialConfig(raw, cfg)
	if err != nil {
		return nil, explainDial(raw, uri, err)
	}
	return &Conn{
		Connection:    conn,
		URL:           Redact(raw),
		Vhost:         vhostOrRoot(uri.Vhost),
		User:          uri.Username,
		ServerVersion: ParseVersion(serverVersion(conn)),
		ID:            id,
		sock:          sock,
	}, nil
}

func newConnID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func vhostOrRoot(v string) string {
	if v == "" {
		return "/"
	}
	return v
}

func serverVersion(c *amqp.Connection) string {
	if v, ok := c.Properties["version"].(string); ok {
		return v
	}
	return ""
}

// errTLSFiles marks TLS file problems, which retrying will not fix.
var errTLSFiles = errors.New("TLS files")

// ErrCertNotTrusted: the broker's TLS certificate is not signed by a CA
// the connection trusts.
var ErrCertNotTrusted = errors.New("server certificate not trusted")

// ErrCertWithoutKey: a client certificate was given without its key, or a
// key without its certificate.
var ErrCertWithoutKey = fmt.Errorf("%w: client certificate and key go together: give both", errTLSFiles)

// Config builds the tls.Config for host from the files.
func (f TLSFiles) Config(host string) (*tls.Config, error) {
	tc := &tls.Config{ServerName: host, MinVersion: tls.VersionTLS12, InsecureSkipVerify: f.InsecureSkipVerify} //nolint:gosec // explicit flag, warned
	if f.CA != "" {
		pem, err := os.ReadFile(f.CA)
		if err != nil {
			return nil, fmt.Errorf("%w: read CA file: %w", errTLSFiles, err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("%w: CA file %s holds no PEM certificate", errTLSFiles, f.CA)
		}
		tc.RootCAs = pool
	}
	if (f.Cert == "") != (f.Key == "") {
		return nil, ErrCertWithoutKey
	}
	if f.Cert != "" {
		pair, err := tls.LoadX509KeyPair(f.Cert, f.Key)
		if err != nil {
			return nil, fmt.Errorf("%w: load client certificate: %w", errTLSFiles, err)
		}
		tc.Certificates = []tls.Certificate{pair}
	}
	return tc, nil
}

// explainDial turns a dial failure into one line that says what to check.
func explainDial(raw string, uri amqp.URI, err error) error {
	where := Redact(raw)
	var ae *amqp.Error
	switch {
	case errors.Is(err, amqp.ErrCredentials):
		return fmt.Errorf("connect %s: %w: wrong username or password for user %q", where, ErrAccessRefused, uri.Username)
	case errors.Is(err, amqp.ErrVhost):
		return fmt.Errorf("connect %s: %w: vhost %q does not exist or user %q has no access to it", where, ErrAccessRefused, vhostOrRoot(uri.Vhost), uri.Username)
	case errors.As(err, &ae):
		if ae.Code == amqp.NotAllowed {
			return fmt.Errorf("connect %s: %w: vhost %q does not exist or user %q has no access to it", where, ErrAccessRefused, vhostOrRoot(uri.Vhost), uri.Username)
		}
		return fmt.Errorf("connect %s: %s", where, RedactText(ae.Reason))
	}
	var opErr *net.OpError
	if errors.As(err, &opErr) {
		msg := opErr.Err.Error()
		if strings.Contains(msg, "connection refused") {
			return fmt.Errorf("connect %s: nothing listens at %s (is RabbitMQ running?)", where, uri.Host+":"+fmt.Sprint(uri.Port))
		}
		return fmt.Errorf("connect %s: %s", where, RedactText(msg))
	}
	var rhe tls.RecordHeaderError
	if errors.As(err, &rhe) {
		return fmt.Errorf("connect %s: TLS: %s does not answer in TLS (a plain amqp:// port? RabbitMQ's TLS listener is usually 5671)", where, uri.Host+":"+fmt.Sprint(uri.Port))
	}
	var certErr *tls.CertificateVerificationError
	if errors.As(err, &certErr) {
		return fmt.Errorf("connect %s: TLS: %w: %s", where, ErrCertNotTrusted, certErr.Err)
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("connect %s: %w", where, err)
	}
	return fmt.Errorf("connect %s: %s", where, RedactText(err.Error()))
}
