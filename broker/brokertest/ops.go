package brokertest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
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

// Rabbitmqctl runs `rabbitmqctl ARGS…` on the test broker's node, bounded
// by timeout, and returns its combined output. $PARKINGLOT_RABBITMQCTL
// names the command for the node under test (`.ci/brokers env NAME` sets
// it for the RabbitMQ 4.x nodes, which run in their own root folders);
// without it, the system's rabbitmqctl and its default node.
func Rabbitmqctl(t testing.TB, timeout time.Duration, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	ctl := os.Getenv("PARKINGLOT_RABBITMQCTL")
	if ctl == "" {
		ctl = "rabbitmqctl"
	}
	out, err := exec.CommandContext(ctx, ctl, args...).CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("rabbitmqctl %s: %w: %s", strings.Join(args, " "), err, bytes.TrimSpace(out))
	}
	return string(out), nil
}

// BrokerTempDir is a folder, removed when the test ends, whose files the
// broker's node can read, and the same folder's path as the node sees it.
// A node of make brokers runs in its own root folder
// ($PARKINGLOT_BROKER_ROOT, set by `.ci/brokers env NAME`): the folder is
// made under that root's /tmp.
func BrokerTempDir(t testing.TB) (host, seenByBroker string) {
	t.Helper()
	root := os.Getenv("PARKINGLOT_BROKER_ROOT")
	host, err := os.MkdirTemp(filepath.Join(root, os.TempDir()), "parkinglot-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(host) })
	// MkdirTemp makes it 0700 and root's: the broker runs as its own user.
	if err := os.Chmod(host, 0o755); err != nil {
		t.Fatal(err)
	}
	return host, strings.TrimPrefix(host, root)
}

// WaitBrokerUp polls until the broker accepts an AMQP connection and the
// management API answers, or timeout passes.
func WaitBrokerUp(t testing.TB, timeout time.Duration) error {
	t.Helper()
	deadline := time.Now().Add(timeout)
	m, err := broker.NewManagement(ManagementURL(), "/")
	if err != nil {
		return err
	}
	defer m.Close()
	var last error
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		c, err := broker.Dial(ctx, broker.Options{URL: URL(), Name: "parkinglot-test wait " + t.Name()})
		if err == nil {
			_ = c.Close()
			_, err = m.Overview(ctx)
		}
		cancel()
		if err == nil {
			return nil
		}
		last = err
		time.Sleep(200 * time.Millisecond) // polling the broker with a deadline
	}
	return fmt.Errorf("the broker did not answer AMQP and the management API within %v: %v", timeout, last)
}

// StartAppAtEnd makes sure the broker's app is running when the test ends,
// whatever the test did to it (`rabbitmqctl start_app` is a no-op on a
// running node). Register it before stopping the app.
func StartAppAtEnd(t testing.TB) {
	t.Helper()
	t.Cleanup(func() {
		if out, err := Rabbitmqctl(t, 2*time.Minute, "start_app"); err != nil {
			t.Errorf("clean-up: %v (%s)", err, out)
		}
		if err := WaitBrokerUp(t, 2*time.Minute); err != nil {
			t.Errorf("clean-up: %v", err)
		}
	})
}

// RestartApp stops and starts the broker's app (`rabbitmqctl stop_app` /
// `start_app`: every connection drops, durable queues recover) and waits,
// bounded, until AMQP and the management API answer again. It returns how
// long the broker was away.
func RestartApp(t testing.TB) time.Duration {
	t.Helper()
	StartAppAtEnd(t)
	start := time.Now()
	if out, err := Rabbitmqctl(t, 2*time.Minute, "stop_app"); err != nil {
		t.Fatalf("%v (%s)", err, out)
	}
	if out, err := Rabbitmqctl(t, 2*time.Minute, "start_app"); err != nil {
		t.Fatalf("%v (%s)", err, out)
	}
	if err := WaitBrokerUp(t, 2*time.Minute); err != nil {
		t.Fatal(err)
	}
	return time.Since(start)
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

// managementRequest sends one request to the test broker's management API
// with the URL's credentials.
func managementRequest(method, path string, body any) error {
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
	err := managementRequest(http.MethodPut, path, map[string]any{"pattern": pattern, "definition": definition, "apply-to": "queues"})
	if err == nil {
		t.Cleanup(func() { _ = managementRequest(http.MethodDelete, path, nil) })
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
	if err := managementRequest(http.MethodPut, "/users/"+url.PathEscape(name), map[string]string{"password": password, "tags": tags}); err != nil {
		t.Fatalf("create user %s: %v", name, err)
	}
	t.Cleanup(func() {
		if err := managementRequest(http.MethodDelete, "/users/"+url.PathEscape(name), nil); err != nil {
			t.Errorf("clean-up: delete user %s: %v", name, err)
		}
	})
	if !withPermissions {
		return
	}
	if err := managementRequest(http.MethodPut, "/permissions/%2F/"+url.PathEscape(name), map[string]string{"configure": ".*", "write": ".*", "read": ".*"}); err != nil {
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

// MemoryAlarm raises the broker's memory alarm (a vm_memory_high_watermark
// far below what the node uses: every publishing connection is blocked) and
// returns a function that restores the watermark the node had; the test's
// clean-up restores it too. It disturbs every test publishing meanwhile:
// use it only in chaos-tagged tests, which run alone.
func MemoryAlarm(t testing.TB) (clear func()) {
	t.Helper()
	out, err := Rabbitmqctl(t, 30*time.Second, "eval", "vm_memory_monitor:get_vm_memory_high_watermark().")
	if err != nil {
		t.Fatal(err)
	}
	restore := []string{"set_vm_memory_high_watermark"}
	was := strings.TrimSpace(out)
	if abs, ok := strings.CutPrefix(was, "{absolute,"); ok {
		restore = append(restore, "absolute", strings.TrimSuffix(abs, "}"))
	} else {
		restore = append(restore, was)
	}
	done := false
	clear = func() {
		if done {
			return
		}
		done = true
		if out, err := Rabbitmqctl(t, 30*time.Second, restore...); err != nil {
			t.Errorf("restore the memory watermark (%s): %v %s", strings.Join(restore, " "), err, out)
		}
	}
	t.Cleanup(clear)
	if out, err := Rabbitmqctl(t, 30*time.Second, "set_vm_memory_high_watermark", "0.0000001"); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	return clear
}

// SetPermissions sets a user's configure, write and read permission
// patterns on vhost "/" ("" grants nothing), e.g. read but no write.
func SetPermissions(t testing.TB, user, configure, write, read string) {
	t.Helper()
	if err := managementRequest(http.MethodPut, "/permissions/%2F/"+url.PathEscape(user), map[string]string{"configure": configure, "write": write, "read": read}); err != nil {
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
	if err := managementRequest(http.MethodPut, path, map[string]string{}); err != nil {
		t.Fatalf("create vhost %s: %v", name, err)
	}
	t.Cleanup(func() { _ = managementRequest(http.MethodDelete, path, nil) })
	u, err := url.Parse(URL())
	if err != nil {
		t.Fatal(err)
	}
	user := u.User.Username()
	if err := managementRequest(http.MethodPut, "/permissions/"+url.PathEscape(name)+"/"+url.PathEscape(user),
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
