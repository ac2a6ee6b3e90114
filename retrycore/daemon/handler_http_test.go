package daemon

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/parkinglot/parkinglot/retrycore"
	amqp "github.com/rabbitmq/amqp091-go"
)

func TestHTTPStatusMapping(t *testing.T) {
	cases := []struct {
		code      int
		body      string
		wantErr   bool
		permanent bool
		text      string
	}{
		{200, "", false, false, ""},
		{204, "", false, false, ""},
		{400, "bad json: unexpected }\nmore detail", true, true, "HTTP 400: bad json: unexpected }"},
		{404, "", true, true, "HTTP 404 Not Found"},
		{422, "amount must be positive", true, true, "HTTP 422: amount must be positive"},
		{408, "slow", true, false, "HTTP 408: slow"},
		{429, "slow down", true, false, "HTTP 429: slow down"},
		{500, "db down", true, false, "HTTP 500: db down"},
		{503, "", true, false, "HTTP 503 Service Unavailable"},
		{302, "", true, false, "HTTP 302 Found"},
	}
	for _, c := range cases {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			if c.code == 302 {
				w.Header().Set("Location", "") // a redirect the client does not follow
			}
			w.WriteHeader(c.code)
			_, _ = io.WriteString(w, c.body)
		}))
		h, err := NewHTTPHandler(srv.URL, &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }})
		if err != nil {
			t.Fatal(err)
		}
		err = h.Handle(context.Background(), Delivery{Body: []byte("{}")})
		srv.Close()
		if (err != nil) != c.wantErr {
			t.Errorf("%d: err = %v, want error %v", c.code, err, c.wantErr)
			continue
		}
		if err == nil {
			continue
		}
		if IsPermanent(err) != c.permanent {
			t.Errorf("%d: permanent = %v, want %v", c.code, IsPermanent(err), c.permanent)
		}
		if err.Error() != c.text {
			t.Errorf("%d: text %q, want %q", c.code, err.Error(), c.text)
		}
	}
}

func TestHTTPHandlerSendsTheMessage(t *testing.T) {
	type seen struct {
		method, ct, id, rk, attempt, headers string
		body                                 string
	}
	got := make(chan seen, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- seen{r.Method, r.Header.Get("Content-Type"), r.Header.Get(HTTPHeaderMessageID), r.Header.Get(HTTPHeaderRoutingKey),
			r.Header.Get(HTTPHeaderAttempt), r.Header.Get(HTTPHeaderHeaders), string(b)}
	}))
	defer srv.Close()
	h, err := NewHTTPHandler(srv.URL+"/hook", nil)
	if err != nil {
		t.Fatal(err)
	}
	d := Delivery{MessageID: "m-1", RoutingKey: "payment.execute", Attempt: 2, ContentType: "application/json",
		Headers: amqp.Table{"x-retry-count": int32(1), "tenant": "acme", "at": time.Unix(1700000000, 0)}, Body: []byte(`{"a":1}`)}
	if err := h.Handle(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	s := <-got
	if s.method != http.MethodPost || s.ct != "application/json" || s.id != "m-1" || s.rk != "payment.execute" || s.attempt != "2" || s.body != `{"a":1}` {
		t.Fatalf("request = %+v", s)
	}
	var hdrs map[string]any
	if err := json.Unmarshal([]byte(s.headers), &hdrs); err != nil {
		t.Fatalf("X-Parkinglot-Headers is not JSON: %v (%q)", err, s.headers)
	}
	if hdrs["x-retry-count"] != float64(1) || hdrs["tenant"] != "acme" || hdrs["at"] != "2023-11-14T22:13:20Z" {
		t.Fatalf("headers = %v", hdrs)
	}
}

func TestHTTPHandlerUnreachableIsTransient(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close() // nothing listens there any more
	h, err := NewHTTPHandler(url, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = h.Handle(context.Background(), Delivery{})
	if err == nil || IsPermanent(err) || !strings.Contains(err.Error(), "POST "+url) {
		t.Fatalf("err = %v, want a transient error naming the URL", err)
	}
}

func TestHTTPHandlerBodySnippetIsBounded(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(500)
		_, _ = io.WriteString(w, strings.Repeat("x", 1<<20))
	}))
	defer srv.Close()
	h, _ := NewHTTPHandler(srv.URL, nil)
	err := h.Handle(context.Background(), Delivery{})
	if err == nil || len(err.Error()) > retrycore.MaxErrorLen {
		t.Fatalf("error text is %d bytes, want <= %d", len(err.Error()), retrycore.MaxErrorLen)
	}
}

func TestNewHTTPHandlerRejectsABadURL(t *testing.T) {
	for _, u := range []string{"", "ftp://x/", "localhost:8080", "http://"} {
		if _, err := NewHTTPHandler(u, nil); err == nil {
			t.Errorf("%q accepted", u)
		}
	}
}

func TestPlainHeaders(t *testing.T) {
	h := amqp.Table{
		"s": "text", "b": []byte("bytes"), "bin": []byte{0xff, 0x00}, "n": int64(5), "i8": int8(-1),
		"f": 1.5, "ok": true, "ts": time.Unix(0, 0), "dec": amqp.Decimal{Scale: 2, Value: -123},
		"tbl": amqp.Table{"k": int32(1)}, "arr": []any{"a", int16(2)}, "nil": nil,
	}
	var got map[string]any
	if err := json.Unmarshal(PlainHeaders(h), &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"s": "text", "b": "bytes", "bin": "/wA=", "n": float64(5), "i8": float64(-1), "f": 1.5, "ok": true,
		"ts": "1970-01-01T00:00:00Z", "dec": "-1.23", "tbl": map[string]any{"k": float64(1)},
		"arr": []any{"a", float64(2)}, "nil": nil,
	}
	for k, w := range want {
		gj, _ := json.Marshal(got[k])
		wj, _ := json.Marshal(w)
		if string(gj) != string(wj) {
			t.Errorf("%s = %s, want %s", k, gj, wj)
		}
	}
	if string(PlainHeaders(nil)) != "{}" {
		t.Errorf("no headers = %s, want {}", PlainHeaders(nil))
	}
}

// A redirect is not followed with the default client: Go's would send a
// GET without the body, whose 200 would ack a message nobody handled.
func TestHTTPHandlerDoesNotFollowARedirect(t *testing.T) {
	var gets int
	mux := http.NewServeMux()
	mux.HandleFunc("/handle", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/login", http.StatusFound) })
	mux.HandleFunc("/login", func(w http.ResponseWriter, _ *http.Request) { gets++; w.WriteHeader(http.StatusOK) })
	srv := httptest.NewServer(mux)
	defer srv.Close()
	h, err := NewHTTPHandler(srv.URL+"/handle", nil)
	if err != nil {
		t.Fatal(err)
	}
	err = h.Handle(context.Background(), Delivery{Body: []byte("{}")})
	if err == nil || IsPermanent(err) || gets != 0 {
		t.Errorf("err = %v (permanent %v), %d GET(s) of the redirect; want a transient error and none", err, IsPermanent(err), gets)
	}
}
