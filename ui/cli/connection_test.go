package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parkinglot/parkinglot/replay"
)

// TestConfigContextTakesAClusterURLList: a context's url and management_url
// may be one URL, a comma list or a YAML list of a cluster's nodes; the
// context's vhost goes into each URL that names none.
func TestConfigContextTakesAClusterURLList(t *testing.T) {
	for _, tc := range []struct {
		name, yaml    string
		url, mgmt     string
		errorContains string
	}{
		{name: "one URL", yaml: "url: amqp://u:p@h1:5672/\n",
			url: "amqp://u:p@h1:5672/vh", mgmt: "http://u:p@h1:15672"},
		{name: "comma list", yaml: "url: amqp://u:p@h1:5672/,amqp://u:p@h2:5672/\n",
			url: "amqp://u:p@h1:5672/vh,amqp://u:p@h2:5672/vh", mgmt: "http://u:p@h1:15672,http://u:p@h2:15672"},
		{name: "YAML list", yaml: "url:\n      - amqp://u:p@h1:5672/\n      - amqp://u:p@h2:5672/other\n    management_url: [http://u:p@h1:15672, http://u:p@h2:15672]\n",
			url: "amqp://u:p@h1:5672/vh,amqp://u:p@h2:5672/other", mgmt: "http://u:p@h1:15672,http://u:p@h2:15672"},
		{name: "list of tables", yaml: "url:\n      - {host: h1}\n", errorContains: "a URL list holds URLs"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "config.yaml")
			body := "current_context: prod\ncontexts:\n  prod:\n    vhost: vh\n    " + tc.yaml
			if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
				t.Fatal(err)
			}
			cfg, err := replay.LoadConfig(path)
			if tc.errorContains != "" {
				if err == nil || !strings.Contains(err.Error(), tc.errorContains) {
					t.Fatalf("load: %v; want an error saying %q", err, tc.errorContains)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			conn, err := resolveConnection(cfg, ConnectionFlags{})
			if err != nil {
				t.Fatal(err)
			}
			if conn.URL != tc.url || conn.ManagementURL != tc.mgmt {
				t.Errorf("url %q, management %q; want %q, %q", conn.URL, conn.ManagementURL, tc.url, tc.mgmt)
			}
		})
	}
}

// TestConnWithVhost: --vhost puts the vhost in every URL of the list,
// escaped, replacing the one a URL names.
func TestConnWithVhost(t *testing.T) {
	c := replay.Connection{URL: "amqp://u:p@h1:5672/,amqp://u:p@h2:5672/orders", Vhost: "/"}
	got := connWithVhost(c, "pay/ments")
	if got.URL != "amqp://u:p@h1:5672/pay%2Fments,amqp://u:p@h2:5672/pay%2Fments" || got.Vhost != "pay/ments" {
		t.Errorf("%q %q", got.URL, got.Vhost)
	}
	if got := connWithVhost(c, "/"); got.URL != "amqp://u:p@h1:5672/%2F,amqp://u:p@h2:5672/%2F" {
		t.Errorf("vhost /: %q", got.URL)
	}
}

// TestVhostFlagOverridesTheURLAndTheContext: --vhost names the vhost every
// command uses (the alerts' command opens a parking lot with it), over the
// context's vhost and the URL's own, in every URL of a list; the management
// API is asked about that vhost.
func TestVhostFlagOverridesTheURLAndTheContext(t *testing.T) {
	cfg := replay.Config{CurrentContext: "prod", Contexts: map[string]replay.Context{
		"prod": {URL: "amqp://u:p@h1:5672/,amqp://u:p@h2:5672/orders", Vhost: "vh"},
	}}
	for _, tc := range []struct {
		name  string
		flags ConnectionFlags
		url   string
		vhost string
	}{
		{"context", ConnectionFlags{Vhost: "pay"}, "amqp://u:p@h1:5672/pay,amqp://u:p@h2:5672/pay", "pay"},
		{"--url", ConnectionFlags{Vhost: "pay", URL: "amqp://u:p@h9:5672/orders"}, "amqp://u:p@h9:5672/pay", "pay"},
		{"PARKINGLOT_URL, default vhost", ConnectionFlags{Vhost: "/", EnvURL: "amqp://u:p@h9:5672/orders"}, "amqp://u:p@h9:5672/%2F", "/"},
		// Without --vhost, a URL given by flag or environment names its
		// own vhost: the context's goes with the context's URL.
		{"PARKINGLOT_URL, no --vhost", ConnectionFlags{EnvURL: "amqp://u:p@h9:5672/"}, "amqp://u:p@h9:5672/", "/"},
		{"--url, no --vhost", ConnectionFlags{URL: "amqp://u:p@h9:5672/orders"}, "amqp://u:p@h9:5672/orders", "orders"},
		{"context alone", ConnectionFlags{}, "amqp://u:p@h1:5672/vh,amqp://u:p@h2:5672/orders", "vh"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conn, err := resolveConnection(cfg, tc.flags)
			if err != nil {
				t.Fatal(err)
			}
			if conn.URL != tc.url || conn.Vhost != tc.vhost {
				t.Errorf("url %q, vhost %q; want %q, %q", conn.URL, conn.Vhost, tc.url, tc.vhost)
			}
			if m, err := conn.Management(); err != nil || m.Vhost() != tc.vhost {
				t.Errorf("management: %v, vhost %q", err, m.Vhost())
			}
		})
	}
}
