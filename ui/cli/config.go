package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/replay"
)

// noSecrets is the annotation of a command that reads no password source:
// the root resolves the connection without running password_command or
// reading a password file (Factory.NoSecrets).
const noSecrets = "parkinglot/no-secrets"

// helpOnly reports whether cmd is cobra's help or completion (or one of
// its shells): they print text and dial nothing, so they run no
// password_command (a shell sourcing the completion would run it at every
// start).
func helpOnly(cmd *cobra.Command) bool {
	for c := cmd; c != nil; c = c.Parent() {
		if n := c.Name(); n == "help" || n == "completion" {
			return true
		}
	}
	return false
}

// ConfigOptions are `parkinglot config`'s.
type ConfigOptions struct {
	*Factory
}

// ConfigView is what `parkinglot config` shows: the active context and
// where each credential comes from, every URL redacted. The *_from fields
// name a flag, an environment variable, a context, a file or a command;
// a password itself is never read here.
type ConfigView struct {
	ConfigFile             string `json:"config_file"`
	ConfigFileExists       bool   `json:"config_file_exists"`
	Context                string `json:"context"`
	ContextFrom            string `json:"context_from"`
	URL                    string `json:"url"`
	URLFrom                string `json:"url_from"`
	PasswordFrom           string `json:"password_from"`
	ManagementURL          string `json:"management_url"`
	ManagementURLFrom      string `json:"management_url_from"`
	ManagementPasswordFrom string `json:"management_password_from"`
	Vhost                  string `json:"vhost"`
	VhostFrom              string `json:"vhost_from"`
	TLSCA                  string `json:"tls_ca,omitempty"`
	TLSCAFrom              string `json:"tls_ca_from,omitempty"`
	TLSCert                string `json:"tls_cert,omitempty"`
	TLSCertFrom            string `json:"tls_cert_from,omitempty"`
	TLSKey                 string `json:"tls_key,omitempty"`
	TLSKeyFrom             string `json:"tls_key_from,omitempty"`
	Warning                string `json:"warning,omitempty"`
}

// NewCmdConfig is `parkinglot config`: which context is active and where
// each credential comes from (flag, environment, config, file, command),
// redacted. It dials nothing and runs no password command.
func NewCmdConfig(f *Factory, runF func(context.Context, *ConfigOptions) error) *cobra.Command {
	opts := &ConfigOptions{Factory: f}
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Show the active context and where each credential comes from (redacted)",
		Long: `Show the config file, the active context, the AMQP and management URLs
(passwords redacted) and where each comes from: a flag (--url,
--management-url, --tls-*), the environment (PARKINGLOT_URL,
PARKINGLOT_MANAGEMENT_URL, PARKINGLOT_PASSWORD_FILE), the context's url,
password_file or password_command, or the built-in default. It reads no
password and runs no command.`,
		Args:        noArgs,
		Annotations: map[string]string{noSecrets: "yes"},
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return configRun(opts)
		},
	}
	return cmd
}

func configRun(opts *ConfigOptions) error {
	v := opts.configView()
	if opts.JSON() {
		return WriteJSONLines(opts.IOStreams.Out, []ConfigView{v})
	}
	w := tabwriter.NewWriter(opts.IOStreams.Out, 0, 0, 2, ' ', 0)
	file := v.ConfigFile
	switch {
	case file == "":
		file = "(none)"
	case !v.ConfigFileExists:
		file += " (absent)"
	}
	fmt.Fprintf(w, "config file\t%s\n", file)
	ctx := "(none)"
	if v.Context != "" {
		ctx = v.Context + "  (" + v.ContextFrom + ")"
	}
	fmt.Fprintf(w, "context\t%s\n", ctx)
	fmt.Fprintf(w, "url\t%s  (%s)\n", v.URL, v.URLFrom)
	fmt.Fprintf(w, "password\t%s\n", v.PasswordFrom)
	fmt.Fprintf(w, "management url\t%s  (%s)\n", v.ManagementURL, v.ManagementURLFrom)
	fmt.Fprintf(w, "management password\t%s\n", v.ManagementPasswordFrom)
	fmt.Fprintf(w, "vhost\t%s  (%s)\n", v.Vhost, v.VhostFrom)
	for _, t := range [][3]string{{"tls ca", v.TLSCA, v.TLSCAFrom}, {"tls cert", v.TLSCert, v.TLSCertFrom}, {"tls key", v.TLSKey, v.TLSKeyFrom}} {
		if t[1] != "" {
			fmt.Fprintf(w, "%s\t%s  (%s)\n", t[0], t[1], t[2])
		}
	}
	return w.Flush()
}

// configView says where each of the resolved connection's values comes
// from, by the precedence replay.Config.Resolve applies: flags over the
// environment over the context over the default.
func (f *Factory) configView() ConfigView {
	fl, conn := f.ConnFlags, f.Conn
	v := ConfigView{ConfigFile: f.ConfigPath, Context: conn.Context, Vhost: conn.Vhost}
	if f.ConfigPath != "" {
		_, err := os.Stat(f.ConfigPath)
		v.ConfigFileExists = !errors.Is(err, fs.ErrNotExist)
	}
	ctxName := "context " + conn.Context
	var c replay.Context
	switch {
	case fl.Context != "":
		v.ContextFrom = "--context"
		c = f.Config.Contexts[conn.Context]
	case conn.Context != "":
		v.ContextFrom = "current_context"
		c = f.Config.Contexts[conn.Context]
	}
	from := func(vals ...[2]string) string {
		for _, p := range vals {
			if p[0] != "" {
				return p[1]
			}
		}
		return ""
	}
	v.URL = broker.Redact(conn.URL)
	v.URLFrom = from([2]string{fl.URL, "--url"}, [2]string{fl.EnvURL, "PARKINGLOT_URL"}, [2]string{string(c.URL), ctxName + " url"}, [2]string{"default", "default"})
	v.PasswordFrom = f.passwordFrom(conn.URL, v.URLFrom)
	v.VhostFrom = from([2]string{fl.Vhost, "--vhost"}, [2]string{c.Vhost, ctxName + " vhost"}, [2]string{"url", "the URL"})
	v.ManagementURL = broker.Redact(conn.ManagementURL)
	if conn.ManagementAssumed {
		v.ManagementURLFrom = "assumed from the AMQP URL"
		v.ManagementPasswordFrom = "the AMQP URL's"
	} else {
		v.ManagementURLFrom = from([2]string{fl.ManagementURL, "--management-url"}, [2]string{fl.EnvManagement, "PARKINGLOT_MANAGEMENT_URL"}, [2]string{string(c.ManagementURL), ctxName + " management_url"})
		v.ManagementPasswordFrom = f.passwordFrom(conn.ManagementURL, v.ManagementURLFrom)
	}
	tls := func(val, flag, flagName string) (string, string) {
		switch {
		case val == "":
			return "", ""
		case flag != "":
			return val, flagName
		}
		return val, ctxName + " tls"
	}
	v.TLSCA, v.TLSCAFrom = tls(conn.TLS.CA, fl.TLS.CA, "--tls-ca")
	v.TLSCert, v.TLSCertFrom = tls(conn.TLS.Cert, fl.TLS.Cert, "--tls-cert")
	v.TLSKey, v.TLSKeyFrom = tls(conn.TLS.Key, fl.TLS.Key, "--tls-key")
	v.Warning = clearTextWarning(f.ConfigPath, f.Config)
	return v
}

// passwordFrom says where a URL list's password comes from, without
// reading it.
func (f *Factory) passwordFrom(raw, urlFrom string) string {
	need, noUser := urlsNeedPassword(raw)
	src := f.passwordSource()
	switch {
	case need && src != nil:
		return src.String()
	case need:
		return "none: the URL names a user and no password, and no password source is set: a connection is refused"
	case noUser:
		return "none: the URL names no user (the broker's default guest)"
	}
	return "written in the URL (" + urlFrom + ")"
}
