//go:build integration

package broker_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/broker/brokertest"
	"github.com/parkinglot/parkinglot/broker/brokertest/clustertest"
)

// TestTLS connects over amqps:// to a TLS listener that the test adds to
// the running broker (rabbit_networking:start_ssl_listener through
// `rabbitmqctl eval`, no restart) with certificates it generates: a CA, a
// server certificate for 127.0.0.1 and localhost, and a client certificate;
// the listener requires the client certificate (verify_peer,
// fail_if_no_peer_cert). The listener is stopped and the files removed at
// the end.
func TestTLS(t *testing.T) {
	pki := newTestPKI(t)
	port := startTLSListener(t, pki)
	url := fmt.Sprintf("amqps://guest:guest@127.0.0.1:%d/", port)
	good := broker.TLSFiles{CA: pki.caCert, Cert: pki.clientCert, Key: pki.clientKey}

	dial := func(t *testing.T, url string, files broker.TLSFiles) (*broker.Conn, error) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		c, err := broker.Dial(ctx, broker.Options{URL: url, TLS: files, Name: "parkinglot-test " + t.Name()})
		if err == nil {
			t.Cleanup(func() { _ = c.Close() })
		}
		return c, err
	}
	oneLine := func(t *testing.T, err error, wants ...string) {
		t.Helper()
		if err == nil {
			t.Fatal("connected; want an error")
		}
		msg := err.Error()
		if strings.Contains(msg, "\n") {
			t.Errorf("error is more than one line: %q", msg)
		}
		for _, w := range wants {
			if !strings.Contains(msg, w) {
				t.Errorf("error %q does not say %q", msg, w)
			}
		}
		if strings.Contains(msg, "guest:guest@") {
			t.Errorf("error shows the password: %q", msg)
		}
	}

	t.Run("CA, client certificate and key connect", func(t *testing.T) {
		for _, host := range []string{"127.0.0.1", "localhost"} {
			c, err := dial(t, fmt.Sprintf("amqps://guest:guest@%s:%d/", host, port), good)
			if err != nil {
				t.Fatalf("%s: %v", host, err)
			}
			ch, err := c.Channel()
			if err != nil {
				t.Fatalf("%s: channel over TLS: %v", host, err)
			}
			q := brokertest.Name(t, "q")
			if _, err := ch.QueueDeclare(q, false, true, true, false, nil); err != nil {
				t.Fatalf("%s: declare over TLS: %v", host, err)
			}
			if !c.ServerVersion.Known() {
				t.Errorf("%s: server version unknown over TLS", host)
			}
		}
	})

	t.Run("a CA that did not sign the server certificate is refused in one line", func(t *testing.T) {
		_, err := dial(t, url, broker.TLSFiles{CA: pki.otherCA, Cert: pki.clientCert, Key: pki.clientKey})
		oneLine(t, err, "TLS", "not trusted")
		if !errors.Is(err, broker.ErrCertNotTrusted) {
			t.Errorf("%v is not ErrCertNotTrusted (the CLI's hint hangs on it)", err)
		}
	})

	t.Run("without a CA the system roots do not trust the test CA", func(t *testing.T) {
		_, err := dial(t, url, broker.TLSFiles{Cert: pki.clientCert, Key: pki.clientKey})
		oneLine(t, err, "not trusted")
	})

	t.Run("a certificate without its key is refused before dialing", func(t *testing.T) {
		_, err := dial(t, url, broker.TLSFiles{CA: pki.caCert, Cert: pki.clientCert})
		oneLine(t, err, "certificate and key go together")
		if !errors.Is(err, broker.ErrCertWithoutKey) {
			t.Errorf("%v is not ErrCertWithoutKey", err)
		}
		if !broker.Permanent(err) {
			t.Errorf("%v: not permanent (a daemon would retry it forever)", err)
		}
		_, err = dial(t, url, broker.TLSFiles{CA: pki.caCert, Key: pki.clientKey})
		if !errors.Is(err, broker.ErrCertWithoutKey) {
			t.Errorf("a key without its certificate: %v is not ErrCertWithoutKey", err)
		}
	})

	t.Run("a key that does not belong to the certificate is refused", func(t *testing.T) {
		_, err := dial(t, url, broker.TLSFiles{CA: pki.caCert, Cert: pki.clientCert, Key: pki.serverKey})
		oneLine(t, err, "client certificate", "private key does not match")
		if !broker.Permanent(err) {
			t.Errorf("%v: not permanent", err)
		}
	})

	t.Run("a missing CA file is named", func(t *testing.T) {
		_, err := dial(t, url, broker.TLSFiles{CA: filepath.Join(pki.dir, "nope.pem"), Cert: pki.clientCert, Key: pki.clientKey})
		oneLine(t, err, "CA file", "nope.pem")
	})

	t.Run("the listener refuses a client without a certificate", func(t *testing.T) {
		_, err := dial(t, url, broker.TLSFiles{CA: pki.caCert})
		oneLine(t, err, "connect amqps://guest:xxxxx@127.0.0.1")
		t.Logf("no client certificate: %v", err)
	})

	t.Run("InsecureSkipVerify connects without the CA", func(t *testing.T) {
		c, err := dial(t, url, broker.TLSFiles{Cert: pki.clientCert, Key: pki.clientKey, InsecureSkipVerify: true})
		if err != nil {
			t.Fatalf("InsecureSkipVerify: %v", err)
		}
		if !c.ServerVersion.Known() {
			t.Error("server version unknown over TLS without verification")
		}
	})
}

// testPKI is a CA with a server and a client certificate, and a second CA
// that signed nothing the broker uses. Files are PEM, in a directory the
// broker (running as user rabbitmq) can read.
type testPKI struct {
	dir                   string
	brokerDir             string // dir as the broker's node sees it
	caCert, otherCA       string
	serverCert, serverKey string
	clientCert, clientKey string
}

func newTestPKI(t *testing.T) testPKI {
	t.Helper()
	// The server's files must be readable by the broker's node (t.TempDir
	// is 0700 and root's, and a make-brokers node has its own root).
	dir, seenByBroker := clustertest.BrokerTempDir(t)
	p := testPKI{dir: dir, brokerDir: seenByBroker}
	write := func(name string, blockType string, der []byte) string {
		path := filepath.Join(dir, name)
		// 0644: the server key must be readable by the broker's user; these
		// are throwaway keys, removed when the test ends.
		if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: blockType, Bytes: der}), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	newKey := func() *ecdsa.PrivateKey {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	keyDER := func(k *ecdsa.PrivateKey) []byte {
		der, err := x509.MarshalPKCS8PrivateKey(k)
		if err != nil {
			t.Fatal(err)
		}
		return der
	}
	serial := int64(1)
	sign := func(tmpl, parent *x509.Certificate, pub *ecdsa.PublicKey, signer *ecdsa.PrivateKey) (*x509.Certificate, []byte) {
		serial++
		tmpl.SerialNumber = big.NewInt(serial)
		tmpl.NotBefore = time.Now().Add(-time.Hour)
		tmpl.NotAfter = time.Now().Add(24 * time.Hour)
		if parent == nil {
			parent = tmpl
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, pub, signer)
		if err != nil {
			t.Fatal(err)
		}
		c, err := x509.ParseCertificate(der)
		if err != nil {
			t.Fatal(err)
		}
		return c, der
	}
	newCA := func(cn string) (*x509.Certificate, *ecdsa.PrivateKey, []byte) {
		k := newKey()
		c, der := sign(&x509.Certificate{
			Subject: pkix.Name{CommonName: cn}, IsCA: true, BasicConstraintsValid: true,
			KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		}, nil, &k.PublicKey, k)
		return c, k, der
	}

	ca, caKey, caDER := newCA("parkinglot test CA")
	p.caCert = write("ca.pem", "CERTIFICATE", caDER)
	_, _, otherDER := newCA("parkinglot other CA")
	p.otherCA = write("other-ca.pem", "CERTIFICATE", otherDER)

	sk := newKey()
	_, serverDER := sign(&x509.Certificate{
		Subject:     pkix.Name{CommonName: "127.0.0.1"},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}, ca, &sk.PublicKey, caKey)
	p.serverCert = write("server.pem", "CERTIFICATE", serverDER)
	p.serverKey = write("server.key", "PRIVATE KEY", keyDER(sk))

	ck := newKey()
	_, clientDER := sign(&x509.Certificate{
		Subject:  pkix.Name{CommonName: "parkinglot-test-client"},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}, ca, &ck.PublicKey, caKey)
	p.clientCert = write("client.pem", "CERTIFICATE", clientDER)
	p.clientKey = write("client.key", "PRIVATE KEY", keyDER(ck))
	return p
}

// startTLSListener adds an amqps listener on a free 127.0.0.1 port to the
// running broker and stops it when the test ends. RabbitMQ 3.10.8 exports
// rabbit_networking:start_ssl_listener/3 and stop_tcp_listener/1 (which
// stops any listener by address), so no restart is needed.
// forBroker is a file of the PKI's as the broker's node sees it.
func (p testPKI) forBroker(path string) string {
	return filepath.Join(p.brokerDir, filepath.Base(path))
}

func startTLSListener(t *testing.T, pki testPKI) int {
	t.Helper()
	port := brokertest.FreePort(t)
	listener := fmt.Sprintf(`{"127.0.0.1", %d}`, port)
	expr := fmt.Sprintf(`{ok, _} = application:ensure_all_started(ssl), rabbit_networking:start_ssl_listener(%s, [{certfile, %q}, {keyfile, %q}, {cacertfile, %q}, {verify, verify_peer}, {fail_if_no_peer_cert, true}], 1).`,
		listener, pki.forBroker(pki.serverCert), pki.forBroker(pki.serverKey), pki.forBroker(pki.caCert))
	out, err := clustertest.Rabbitmqctl(t, 60*time.Second, "eval", expr)
	if err != nil || strings.TrimSpace(out) != "ok" {
		t.Fatalf("add a TLS listener on port %d: %v %s", port, err, out)
	}
	t.Cleanup(func() {
		out, err := clustertest.Rabbitmqctl(t, 60*time.Second, "eval", fmt.Sprintf("rabbit_networking:stop_tcp_listener(%s).", listener))
		if err != nil || strings.TrimSpace(out) != "ok" {
			t.Errorf("clean-up: stop the TLS listener on port %d: %v %s", port, err, out)
		}
	})
	var dialErr error
	brokertest.Eventually(t, 15*time.Second, 50*time.Millisecond, func() bool {
		var c net.Conn
		if c, dialErr = net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second); dialErr != nil {
			return false
		}
		_ = c.Close()
		return true
	}, func() string {
		return fmt.Sprintf("the TLS listener on port %d does not accept connections: %v", port, dialErr)
	})
	return port
}
