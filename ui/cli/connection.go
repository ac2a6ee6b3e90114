package cli

import (
	"fmt"
	"net/url"
	"sort"
	"strings"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/replay"
)

// ConnectionFlags are the values given on the command line and in the
// environment; empty means "not given".
type ConnectionFlags struct {
	Context       string
	URL           string // --url
	ManagementURL string // --management-url
	EnvURL        string // PARKINGLOT_URL
	EnvManagement string // PARKINGLOT_MANAGEMENT_URL
	Vhost         string // --vhost: over the URL's and the context's
	TLS           broker.TLSFiles
	// AllowManagementMismatch skips the management check (see Connection).
	AllowManagementMismatch bool
}

// DefaultURL is where parkinglot connects when nothing says otherwise.
const DefaultURL = "amqp://guest:guest@localhost:5672/"

// resolveConnection applies the precedence: flags over environment over the config
// context over the built-in default.
func resolveConnection(c replay.Config, f ConnectionFlags) (replay.Connection, error) {
	var conn replay.Connection
	name := f.Context
	if name == "" {
		name = c.CurrentContext
	}
	if name != "" {
		ctxCfg, ok := c.Contexts[name]
		if !ok {
			known := make([]string, 0, len(c.Contexts))
			for k := range c.Contexts {
				known = append(known, k)
			}
			sort.Strings(known)
			if len(known) == 0 {
				return conn, fmt.Errorf("no context %q: the config defines no contexts", name)
			}
			return conn, fmt.Errorf("no context %q in the config (known: %s)", name, strings.Join(known, ", "))
		}
		conn = replay.Connection{URL: string(ctxCfg.URL), ManagementURL: string(ctxCfg.ManagementURL), Vhost: ctxCfg.Vhost, Context: name}
		conn.TLS = broker.TLSFiles{CA: ctxCfg.TLS.CA, Cert: ctxCfg.TLS.Cert, Key: ctxCfg.TLS.Key}
	}
	pick := func(dst *string, vals ...string) {
		for _, v := range vals {
			if v != "" {
				*dst = v
				return
			}
		}
	}
	pick(&conn.URL, f.URL, f.EnvURL, conn.URL, DefaultURL)
	pick(&conn.ManagementURL, f.ManagementURL, f.EnvManagement, conn.ManagementURL)
	pick(&conn.TLS.CA, f.TLS.CA)
	pick(&conn.TLS.Cert, f.TLS.Cert)
	pick(&conn.TLS.Key, f.TLS.Key)
	conn.TLS.InsecureSkipVerify = f.TLS.InsecureSkipVerify
	switch {
	case conn.Vhost == "" || f.URL != "" || f.EnvURL != "":
		// The context's vhost goes with the context's URL: a URL given by
		// flag or environment names its own (else both would differ: the
		// AMQP connection on one vhost, the management API asked of another).
		conn.Vhost = broker.Vhost(conn.URL)
	default:
		conn.URL = broker.WithVhost(conn.URL, conn.Vhost)
	}
	if f.Vhost != "" {
		conn = connWithVhost(conn, f.Vhost)
	}
	if conn.ManagementURL == "" {
		conn.ManagementURL = broker.ManagementURL(conn.URL)
		conn.ManagementAssumed = true
	}
	conn.AllowManagementMismatch = f.AllowManagementMismatch
	return conn, nil
}

// connWithVhost is c on another vhost: every URL of its list names it.
func connWithVhost(c replay.Connection, vhost string) replay.Connection {
	urls := broker.SplitURLs(c.URL)
	for i, raw := range urls {
		u, err := url.Parse(raw)
		if err != nil {
			continue // the dial says what is wrong with it
		}
		u.Path, u.RawPath = "/"+vhost, "/"+url.PathEscape(vhost)
		urls[i] = u.String()
	}
	c.URL, c.Vhost = strings.Join(urls, ","), vhost
	return c
}
