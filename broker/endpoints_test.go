package broker

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestSplitURLs(t *testing.T) {
	cases := []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"  ", nil},
		{"amqp://u:p@h1:5672/", []string{"amqp://u:p@h1:5672/"}},
		{"amqp://u:p@h1:5672/,amqp://u:p@h2:5672/", []string{"amqp://u:p@h1:5672/", "amqp://u:p@h2:5672/"}},
		{"amqp://u:p@h1/ , amqps://u:p@h2:5671/v ,amqp://h3", []string{"amqp://u:p@h1/", "amqps://u:p@h2:5671/v", "amqp://h3"}},
		// A comma not followed by a scheme is part of the URL (a password, a vhost).
		{"amqp://u:p,w@h1/v,x,amqp://u:p,w@h2/", []string{"amqp://u:p,w@h1/v,x", "amqp://u:p,w@h2/"}},
		{"http://g:g@127.0.0.1:15681,http://g:g@127.0.0.1:15682", []string{"http://g:g@127.0.0.1:15681", "http://g:g@127.0.0.1:15682"}},
	}
	for _, c := range cases {
		if got := SplitURLs(c.in); !reflect.DeepEqual(got, c.want) {
			t.Errorf("SplitURLs(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	if IsList("amqp://h1/") || !IsList("amqp://h1/,amqp://h2/") {
		t.Error("IsList")
	}
	if got := FirstURL("amqp://a:b@h1/v1,amqp://a:b@h2/v2"); got != "amqp://a:b@h1/v1" {
		t.Errorf("FirstURL = %q", got)
	}
}

func TestRedactList(t *testing.T) {
	in := "amqp://u1:s3cret1@h1:5672/,amqps://u2:p@ss,2@h2:5671/v,amqp://h3/"
	want := "amqp://u1:xxxxx@h1:5672/,amqps://u2:xxxxx@h2:5671/v,amqp://h3/"
	if got := Redact(in); got != want {
		t.Errorf("Redact = %q, want %q", got, want)
	}
	text := `connect "amqp://u1:s3cret1@h1:5672/,amqp://u2:hunter2@h2:5672/": refused`
	got := RedactText(text)
	if want := `connect "amqp://u1:xxxxx@h1:5672/,amqp://u2:xxxxx@h2:5672/": refused`; got != want {
		t.Errorf("RedactText = %q, want %q", got, want)
	}
	for _, secret := range []string{"s3cret1", "hunter2", "ss,2"} {
		if strings.Contains(Redact(in)+RedactText(text), secret) {
			t.Errorf("%q shows", secret)
		}
	}
}

func TestParseURLsNamesTheBadOneWithoutItsPassword(t *testing.T) {
	urls, uris, err := ParseURLs("amqp://a:pw1@h1:5672/v,amqps://b:pw2@h2:5671/")
	if err != nil {
		t.Fatal(err)
	}
	if len(urls) != 2 || uris[0].Host != "h1" || uris[0].Vhost != "v" || uris[1].Username != "b" || uris[1].Scheme != "amqps" {
		t.Errorf("ParseURLs = %q %+v", urls, uris)
	}
	_, _, err = ParseURLs("amqp://a:pw1@h1:5672/,amqp://b:pw2@h2:99999/")
	if !errors.Is(err, ErrBadURL) || !strings.Contains(err.Error(), "URL 2 of 2") || strings.Contains(err.Error(), "pw") {
		t.Errorf("bad port in URL 2: %v", err)
	}
	if _, err := ParseURL("amqp://h1/,amqp://h2/"); !errors.Is(err, ErrBadURL) {
		t.Errorf("ParseURL of a list: %v", err)
	}
}

func TestVhostAndWithVhostOfAList(t *testing.T) {
	if got := Vhost("amqp://h1:5672/payments,amqp://h2:5672/payments"); got != "payments" {
		t.Errorf("Vhost = %q", got)
	}
	got := WithVhost("amqp://u:p@h1:5672/,amqp://u:p@h2:5672/other", "a/b")
	if want := "amqp://u:p@h1:5672/a%2Fb,amqp://u:p@h2:5672/other"; got != want {
		t.Errorf("WithVhost = %q, want %q", got, want)
	}
	// A query stays the query's: the vhost goes in the path.
	got = WithVhost("amqps://ops@rabbit:5671?server_name_indication=rabbit.internal", "payments")
	if want := "amqps://ops@rabbit:5671/payments?server_name_indication=rabbit.internal"; got != want || Vhost(got) != "payments" {
		t.Errorf("WithVhost with a query = %q (vhost %q), want %q", got, Vhost(got), want)
	}
}

func TestManagementURLOfAList(t *testing.T) {
	got := ManagementURL("amqp://u:p@h1:5672/,amqp://u:p@h2:5672/,amqp://u:p@h2:5673/")
	if want := "http://u:p@h1:15672,http://u:p@h2:15672"; got != want {
		t.Errorf("ManagementURL = %q, want %q", got, want)
	}
}

func TestEndpointsRotation(t *testing.T) {
	e := &endpoints{urls: []string{"a", "b", "c"}}
	if got := e.order(); !reflect.DeepEqual(got, []int{0, 1, 2}) {
		t.Errorf("order = %v", got)
	}
	e.connected(1)
	if got := e.order(); !reflect.DeepEqual(got, []int{1, 2, 0}) {
		t.Errorf("after connecting to b: %v", got)
	}
	e.lost(1)
	if got := e.order(); !reflect.DeepEqual(got, []int{2, 0, 1}) {
		t.Errorf("after losing b: %v", got)
	}
	e.lost(1) // a late loss of b must not skip c, which a dial already chose
	if got := e.order(); got[0] != 2 {
		t.Errorf("a stale loss moved the order: %v", got)
	}
	e.lost(2)
	if got := e.order(); got[0] != 0 {
		t.Errorf("after losing c (wrap): %v", got)
	}

	// The first URL tried is random per list: over many lists, every
	// position comes first.
	first := map[int]bool{}
	for i := 0; i < 200 && len(first) < 3; i++ {
		raw := "amqp://h1/,amqp://h2/,amqp://h3/?x=" + string(rune('a'+i%26)) + strings.Repeat("y", i)
		first[endpointsOf(raw, SplitURLs(raw)).order()[0]] = true
	}
	if len(first) != 3 {
		t.Errorf("first URLs tried over 200 lists: %v, want all three", first)
	}
	// The same list shares its order.
	raw := "amqp://s1/,amqp://s2/"
	if endpointsOf(raw, SplitURLs(raw)) != endpointsOf(raw, SplitURLs(raw)) {
		t.Error("one list, two dial orders")
	}
}

// closedPort returns a local address nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	return addr
}

func TestDialListNamesEveryURLAndNoPassword(t *testing.T) {
	a, b := closedPort(t), closedPort(t)
	raw := "amqp://u:pw-one@" + a + "/,amqp://u:pw-two@" + b + "/"
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := Dial(ctx, Options{URL: raw})
	if err == nil {
		t.Fatal("dialled nothing")
	}
	msg := err.Error()
	if !strings.Contains(msg, "none of the 2 brokers answered") || !strings.Contains(msg, a) || !strings.Contains(msg, b) {
		t.Errorf("error does not name both URLs: %s", msg)
	}
	if strings.Contains(msg, "pw-") {
		t.Errorf("error shows a password: %s", msg)
	}
	if Permanent(err) {
		t.Errorf("unreachable brokers are not a permanent error: %v", err)
	}
	if strings.Count(msg, "\n") != 0 {
		t.Errorf("not one line: %q", msg)
	}
}

// TestDialListGivesEachHostItsOwnTLSServerName dials two amqps URLs whose
// listeners record the TLS server name (SNI) each was sent.
func TestDialListGivesEachHostItsOwnTLSServerName(t *testing.T) {
	var mu sync.Mutex
	sni := map[string][]string{} // listener port → server names seen
	listen := func() string {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = l.Close() })
		_, port, _ := net.SplitHostPort(l.Addr().String())
		go func() {
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				srv := tls.Server(c, &tls.Config{GetConfigForClient: func(h *tls.ClientHelloInfo) (*tls.Config, error) {
					mu.Lock()
					sni[port] = append(sni[port], h.ServerName)
					mu.Unlock()
					return nil, errors.New("recorded")
				}})
				_ = srv.Handshake()
				_ = c.Close()
			}
		}()
		return port
	}
	p1, p2 := listen(), listen()
	raw := "amqps://u:p@localhost:" + p1 + "/,amqps://u:p@127.0.0.1:" + p2 + "/"
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := Dial(ctx, Options{URL: raw}); err == nil {
		t.Fatal("dialled a listener that speaks no AMQP")
	}
	mu.Lock()
	defer mu.Unlock()
	// Go sends no SNI for an IP address; what matters is that the second
	// URL is not sent the first one's host name.
	if !reflect.DeepEqual(sni[p1], []string{"localhost"}) || len(sni[p2]) != 1 || sni[p2][0] != "" {
		t.Errorf("server names: localhost URL %q, 127.0.0.1 URL %q", sni[p1], sni[p2])
	}
}

func TestManagementFailsOverPerRequest(t *testing.T) {
	hits := map[string]int{}
	var mu sync.Mutex
	answering := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits[r.URL.Path]++
		mu.Unlock()
		if u, p, _ := r.BasicAuth(); u != "u2" || p != "p2" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		_, _ = w.Write([]byte(`{"rabbitmq_version":"4.3.6","cluster_name":"c"}`))
	}))
	defer answering.Close()
	down := closedPort(t)
	unavailable := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer unavailable.Close()

	raw := "http://u1:p1@" + down + "," + strings.Replace(unavailable.URL, "http://", "http://u3:p3@", 1) + "," + strings.Replace(answering.URL, "http://", "http://u2:p2@", 1)
	m, err := NewManagement(raw, "")
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if len(m.URLs()) != 3 {
		t.Fatalf("URLs = %q", m.URLs())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	o, err := m.Overview(ctx)
	if err != nil || o.RabbitMQVersion != "4.3.6" {
		t.Fatalf("Overview = %+v, %v", o, err)
	}
	if m.URL() != answering.URL {
		t.Errorf("the node that answered is not asked first now: %s", m.URL())
	}
	if _, err := m.Overview(ctx); err != nil {
		t.Fatal(err)
	}
	if hits["/api/overview"] != 2 {
		t.Errorf("the answering node was asked %d times, want 2", hits["/api/overview"])
	}

	// None answering: one error naming each, no password.
	m2, err := NewManagement("http://u:secret1@"+down+",http://u:secret2@"+closedPort(t), "/")
	if err != nil {
		t.Fatal(err)
	}
	_, err = m2.Overview(ctx)
	if !errors.Is(err, ErrNoManagement) || !strings.Contains(err.Error(), down) || strings.Contains(err.Error(), "secret") {
		t.Errorf("none answering: %v", err)
	}
	if _, err := NewManagement("http://u:secret@h1:15672,ftp://u:secret@h2", "/"); !errors.Is(err, ErrBadURL) || strings.Contains(err.Error(), "secret") {
		t.Errorf("a bad URL in the list: %v", err)
	}
}
