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
