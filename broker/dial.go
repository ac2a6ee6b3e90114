package broker

import (
	"context"
	"crypto/tls"
	"crypto/x509"
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
	URL           string // redacted
	Vhost         string
	ServerVersion Version
}

// Dial opens one AMQP connection. It does not retry: see Redialer.
func Dial(ctx context.Context, opts Options) (*Conn, error) {
	uri, err := ParseURL(opts.URL)
	if err != nil {
		return nil, err
	}
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
	if uri.Scheme == "amqps" {
		tc, err := opts.TLS.Config(uri.Host)
		if err != nil {
			return nil, err
		}
		if opts.TLS.InsecureSkipVerify && opts.Logger != nil {
			opts.Logger.Warn("TLS certificate verification is disabled (--insecure-skip-verify)", "url", Redact(opts.URL))
		}
		cfg.TLSClientConfig = tc
	}
	dialer := &net.Dialer{Timeout: 10 * time.Second}
	cfg.Dial = func(network, addr string) (net.Conn, error) {
		c, err := dialer.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		// Bound the handshake; amqp091-go clears the deadline once open.
		if err := c.SetDeadline(time.Now().Add(15 * time.Second)); err != nil {
			_ = c.Close()
			return nil, err
		}
		return c, nil
	}
	conn, err := amqp.DialConfig(opts.URL, cfg)
	if err != nil {
		return nil, explainDial(opts.URL, uri, err)
	}
	return &Conn{
		Connection:    conn,
		URL:           Redact(opts.URL),
		Vhost:         vhostOrRoot(uri.Vhost),
		ServerVersion: ParseVersion(serverVersion(conn)),
	}, nil
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
		return nil, fmt.Errorf("%w: client certificate and key go together: give both --tls-cert and --tls-key", errTLSFiles)
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
		return fmt.Errorf("connect %s: TLS: server certificate not trusted (pass --tls-ca): %s", where, certErr.Err)
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("connect %s: %w", where, err)
	}
	return fmt.Errorf("connect %s: %s", where, RedactText(err.Error()))
}
