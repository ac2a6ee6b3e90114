package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/replay"
)

// --insecure-skip-verify is the only way to turn certificate checks off:
// the flag reaches the connection and warns on stderr; the environment and
// the config file cannot (it refuses the key). A certificate the CA files do not trust ends the
// command in one line naming --tls-ca, exit 1. (broker's TestTLS dials a
// real TLS listener with each setting.)
func TestTLSFlags(t *testing.T) {
	client := []string{"--tls-cert", "client.pem", "--tls-key", "client.key"}
	listing := func() *fakeSession {
		return &fakeSession{browse: func(replay.BrowseOptions) (*replay.Browse, error) { return &replay.Browse{}, nil }}
	}
	runList := func(t *testing.T, env map[string]string, args ...string) (*Factory, int, string) {
		t.Helper()
		f, b := fakeFactory(t, listing())
		f.Getenv = func(k string) string { return env[k] }
		code := run(context.Background(), f, append([]string{"list", "q"}, args...))
		return f, code, b.err.String()
	}

	t.Run("with --tls-ca", func(t *testing.T) {
		f, code, stderr := runList(t, nil, append([]string{"--tls-ca", "ca.pem"}, client...)...)
		if code != 0 || strings.Contains(stderr, "insecure") || f.Conn.TLS.InsecureSkipVerify || f.Conn.TLS.CA != "ca.pem" {
			t.Fatalf("exit %d, TLS %+v, stderr %q", code, f.Conn.TLS, stderr)
		}
	})

	t.Run("a certificate not trusted", func(t *testing.T) {
		f, b := testFactory(t)
		f.OpenSession = func(context.Context, string) (Session, error) {
			return nil, fmt.Errorf("connect amqps://guest:xxxxx@127.0.0.1:5671/: TLS: %w: x509: certificate signed by unknown authority", broker.ErrCertNotTrusted)
		}
		code := run(context.Background(), f, append([]string{"list", "q"}, client...))
		stderr := strings.TrimSpace(b.err.String())
		if code != 1 || !strings.Contains(stderr, "not trusted") || !strings.HasSuffix(stderr, "(pass --tls-ca)") || strings.Count(stderr, "\n") != 0 {
			t.Fatalf("exit %d, stderr %q; want exit 1 and one line saying the certificate is not trusted, ending with the flag that mends it", code, stderr)
		}
	})

	t.Run("--insecure-skip-verify", func(t *testing.T) {
		f, code, stderr := runList(t, nil, append([]string{"--insecure-skip-verify"}, client...)...)
		if code != 0 || !f.Conn.TLS.InsecureSkipVerify {
			t.Fatalf("exit %d, TLS %+v, stderr %q", code, f.Conn.TLS, stderr)
		}
		if !strings.Contains(stderr, "level=WARN") || !strings.Contains(stderr, "insecure-skip-verify") {
			t.Fatalf("--insecure-skip-verify without a warning on stderr:\n%s", stderr)
		}
	})

	for _, env := range []map[string]string{{"PARKINGLOT_INSECURE_SKIP_VERIFY": "true"}, {"PARKINGLOT_INSECURE_SKIP_VERIFY": "1", "INSECURE_SKIP_VERIFY": "1"}} {
		t.Run(fmt.Sprint("environment ", env), func(t *testing.T) {
			f, code, stderr := runList(t, env, client...)
			if f.Conn.TLS.InsecureSkipVerify || strings.Contains(stderr, "insecure") {
				t.Fatalf("%v turned verification off: exit %d, stderr %q", env, code, stderr)
			}
		})
	}

	t.Run("config file", func(t *testing.T) {
		cfg := filepath.Join(t.TempDir(), "config.yaml")
		if err := os.WriteFile(cfg, []byte("current_context: tls\ncontexts:\n  tls:\n    url: amqps://guest:guest@127.0.0.1:5671/\n    tls: {insecure_skip_verify: true, cert: client.pem, key: client.key}\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		f, code, stderr := runList(t, nil, "--config", cfg)
		// Refused as an unknown key, before anything is dialled.
		if code != 2 || f.Conn.TLS.InsecureSkipVerify || !strings.Contains(stderr, `unknown key "insecure_skip_verify"`) {
			t.Fatalf("a config file's insecure_skip_verify: exit %d, stderr %q; want exit 2, refused as an unknown key", code, stderr)
		}
	})
}
