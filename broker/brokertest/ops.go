package brokertest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker"
)

// Figures reports a test's figures line (messages, faults injected, lost,
// duplicates) so that it shows in `go test` output: on stdout (seen with -v),
// in the test log, and appended to $PARKINGLOT_FIGURES when set, which
// `make test` prints at the end (go test hides a passing package's output).
func Figures(t testing.TB, format string, args ...any) {
	t.Helper()
	line := fmt.Sprintf(format, args...)
	t.Log(line)
	fmt.Println(line)
	if path := os.Getenv("PARKINGLOT_FIGURES"); path != "" {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			t.Errorf("figures file: %v", err)
			return
		}
		defer f.Close()
		broker := os.Getenv("PARKINGLOT_BROKER") // make test's name for the broker under test
		if broker == "" {
			broker = "system"
		}
		if _, err := fmt.Fprintf(f, "[%s] %s: %s\n", broker, t.Name(), line); err != nil {
			t.Errorf("figures file: %v", err)
		}
	}
}

// FreePort returns a TCP port on 127.0.0.1 that nothing listened on a
// moment ago.
func FreePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// ManagementRequest sends one request to the test broker's management API
// with the URL's credentials.
func ManagementRequest(method, path string, body any) error {
	return managementDo(method, path, body, nil)
}

// StatusError is a management API answer other than 2xx.
type StatusError struct {
	Method, Path string
	Code         int
	Status       string
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("management API %s %s: %s", e.Method, e.Path, e.Status)
}

// managementDo sends a request to the test broker's management API and
// decodes a JSON answer into out (when not nil).
func managementDo(method, path string, body, out any) error {
	u, err := url.Parse(ManagementURL())
	if err != nil {
		return err
	}
	user := u.User
	u.User = nil
	var rd *bytes.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	} else {
		rd = bytes.NewReader(nil)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimSuffix(u.String(), "/")+"/api"+path, rd)
	if err != nil {
		return err
	}
	if user != nil {
		pw, _ := user.Password()
		req.SetBasicAuth(user.Username(), pw)
	}
	req.Header.Set("Content-Type", "application/json")
	// No keep-alive: an idle connection's goroutines would trip goleak.
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 && !(method == http.MethodDelete && resp.StatusCode == http.StatusNotFound) {
		return &StatusError{Method: method, Path: path, Code: resp.StatusCode, Status: resp.Status}
	}
	if out != nil {
		return json.NewDecoder(resp.Body).Decode(out)
	}
	return nil
}

// PutPolicy sets a policy on the test broker's default vhost (removed when
// the test ends) and returns the management API's error, if any, for the
// test to judge.
func PutPolicy(t testing.TB, name, pattern string, definition map[string]any) error {
	t.Helper()
	path := "/policies/%2F/" + url.PathEscape(name)
	err := ManagementRequest(http.MethodPut, path, map[string]any{"pattern": pattern, "definition": definition, "apply-to": "queues"})
	if err == nil {
		t.Cleanup(func() { _ = ManagementRequest(http.MethodDelete, path, nil) })
	}
	return err
}

// RawQueue is the management API's answer for one queue of the default
// vhost, undecoded, for tests of what each version says.
func RawQueue(ctx context.Context, t testing.TB, queue string) (map[string]any, error) {
	t.Helper()
	var out map[string]any
	err := managementDo(http.MethodGet, "/queues/%2F/"+url.PathEscape(queue), nil, &out)
	return out, err
}

// CreateUser creates a broker user with the given password and tags (e.g.
// "management" so it may use the management API), grants it full
// permissions on vhost "/" when withPermissions is set, and deletes the
// user when the test ends (which also closes its connections).
func CreateUser(t testing.TB, name, password, tags string, withPermissions bool) {
	t.Helper()
	if err := ManagementRequest(http.MethodPut, "/users/"+url.PathEscape(name), map[string]string{"password": password, "tags": tags}); err != nil {
		t.Fatalf("create user %s: %v", name, err)
	}
	t.Cleanup(func() {
		if err := ManagementRequest(http.MethodDelete, "/users/"+url.PathEscape(name), nil); err != nil {
			t.Errorf("clean-up: delete user %s: %v", name, err)
		}
	})
	if !withPermissions {
		return
	}
	if err := ManagementRequest(http.MethodPut, "/permissions/%2F/"+url.PathEscape(name), map[string]string{"configure": ".*", "write": ".*", "read": ".*"}); err != nil {
		t.Fatalf("grant %s permissions on /: %v", name, err)
	}
}

// URLFor is the test broker's AMQP URL with other credentials (and vhost,
// when vhost is not empty; "/" is written %2F).
func URLFor(user, password, vhost string) string {
	u, err := url.Parse(URL())
	if err != nil {
		return ""
	}
	u.User = url.UserPassword(user, password)
	if vhost != "" {
		u.Path = "/" + vhost
		u.RawPath = "/" + url.PathEscape(vhost)
	}
	return u.String()
}

// ManagementURLFor is the test broker's management URL with other
// credentials.
func ManagementURLFor(user, password string) string {
	u, err := url.Parse(ManagementURL())
	if err != nil {
		return ""
	}
	u.User = url.UserPassword(user, password)
	return u.String()
}

// SetPermissions sets a user's configure, write and read permission
// patterns on vhost "/" ("" grants nothing), e.g. read but no write.
func SetPermissions(t testing.TB, user, configure, write, read string) {
	t.Helper()
	if err := ManagementRequest(http.MethodPut, "/permissions/%2F/"+url.PathEscape(user), map[string]string{"configure": configure, "write": write, "read": read}); err != nil {
		t.Fatalf("set %s permissions on /: %v", user, err)
	}
}

// Vhost creates a vhost of the test's own, with full permissions for the
// test broker's user, and deletes it (and all it holds) when the test
// ends: for a test that must see every queue of a vhost without the other
// tests' queues.
func Vhost(t testing.TB) string {
	t.Helper()
	name := Name(t, "vhost")
	path := "/vhosts/" + url.PathEscape(name)
	if err := ManagementRequest(http.MethodPut, path, map[string]string{}); err != nil {
		t.Fatalf("create vhost %s: %v", name, err)
	}
	t.Cleanup(func() { _ = ManagementRequest(http.MethodDelete, path, nil) })
	u, err := url.Parse(URL())
	if err != nil {
		t.Fatal(err)
	}
	user := u.User.Username()
	if err := ManagementRequest(http.MethodPut, "/permissions/"+url.PathEscape(name)+"/"+url.PathEscape(user),
		map[string]string{"configure": ".*", "write": ".*", "read": ".*"}); err != nil {
		t.Fatalf("grant %s permissions on %s: %v", user, name, err)
	}
	return name
}

// VhostChannel is a vhost of the test's own (Vhost) with the test broker's
// user: its AMQP URL and a channel on it, closed when the test ends. For a
// test whose command reads every parking lot of its vhost.
func VhostChannel(t testing.TB) (vurl string, ch *amqp.Channel) {
	t.Helper()
	vhost := Vhost(t)
	u, err := url.Parse(URL())
	if err != nil {
		t.Fatal(err)
	}
	pw, _ := u.User.Password()
	vurl = URLFor(u.User.Username(), pw, vhost)
	conn, err := amqp.Dial(vurl)
	if err != nil {
		t.Fatalf("dial %s: %v", broker.Redact(vurl), err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	if ch, err = conn.Channel(); err != nil {
		t.Fatal(err)
	}
	return vurl, ch
}

// QueueExists reports whether queue exists now (a passive declare on a
// channel of its own: a 404 closes it).
func QueueExists(t testing.TB, queue string) bool {
	t.Helper()
	return exists(t, func(ch *amqp.Channel) error {
		_, err := ch.QueueDeclarePassive(queue, true, false, false, false, nil)
		return err
	})
}

// ExchangeExists reports whether exchange exists now.
func ExchangeExists(t testing.TB, exchange string) bool {
	t.Helper()
	return exists(t, func(ch *amqp.Channel) error {
		return ch.ExchangeDeclarePassive(exchange, amqp.ExchangeDirect, true, false, false, false, nil)
	})
}

func exists(t testing.TB, passive func(*amqp.Channel) error) bool {
	t.Helper()
	conn := RawDial(t, "exists "+t.Name())
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		t.Fatalf("open channel: %v", err)
	}
	err = passive(ch)
	var ae *amqp.Error
	if errors.As(err, &ae) && ae.Code == amqp.NotFound {
		return false
	}
	if err != nil {
		t.Fatalf("passive declare: %v", err)
	}
	return true
}
