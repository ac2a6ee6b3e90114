package daemon

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/retrycore"
)

// HTTP headers the HTTP handler sends with each message.
const (
	HTTPHeaderMessageID  = "X-Parkinglot-Message-Id"
	HTTPHeaderRoutingKey = "X-Parkinglot-Routing-Key"
	HTTPHeaderAttempt    = "X-Parkinglot-Attempt"
	HTTPHeaderExchange   = "X-Parkinglot-Exchange"
	// HTTPHeaderHeaders carries the AMQP headers as one JSON object, in the
	// form of PlainHeaders.
	HTTPHeaderHeaders = "X-Parkinglot-Headers"
)

// maxHTTPHeaders bounds X-Parkinglot-Headers: servers commonly refuse
// request header blocks over 8–16 KiB, which would fail every attempt.
const maxHTTPHeaders = 8 << 10

// HTTPHandler POSTs each message to a URL, with its facts in
// X-Parkinglot-* headers and the HTTP status as the outcome.
type HTTPHandler struct {
	url    string
	client *http.Client
}

// NewHTTPHandler checks the URL and returns the handler. A nil client
// means a plain http.Client: the loop's handler timeout (the request's
// context) bounds each request.
func NewHTTPHandler(rawURL string, client *http.Client) (*HTTPHandler, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("http handler: %q is not an http(s)://host/path URL", broker.RedactText(rawURL))
	}
	if client == nil {
		// Redirects are not followed: Go's client would turn the POST
		// into a GET without the body, and the GET's 2xx would ack a
		// message nobody handled. A 3xx is transient (Handle).
		client = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	return &HTTPHandler{url: rawURL, client: client}, nil
}

// Handle POSTs the body. 2xx is done; 4xx other than 408 and 429 is
// permanent; anything else (5xx, 408, 429, 3xx, no answer) is transient. The
// first line of the response body (at most 1 KiB) is the error text.
func (h *HTTPHandler) Handle(ctx context.Context, d Delivery) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.url, bytes.NewReader(d.Body))
	if err != nil {
		return Permanent(fmt.Errorf("build request: %w", err))
	}
	ct := d.ContentType
	if ct == "" {
		ct = "application/octet-stream"
	}
	req.Header.Set("Content-Type", ct)
	req.Header.Set(HTTPHeaderMessageID, headerSafe(d.MessageID))
	req.Header.Set(HTTPHeaderRoutingKey, headerSafe(d.RoutingKey))
	req.Header.Set(HTTPHeaderExchange, headerSafe(d.Exchange))
	req.Header.Set(HTTPHeaderAttempt, strconv.Itoa(d.Attempt))
	hdrs := PlainHeaders(d.Headers)
	if len(hdrs) > maxHTTPHeaders {
		hdrs = PlainHeaders(withoutDeath(d))
		if len(hdrs) > maxHTTPHeaders {
			hdrs = []byte("{}")
		}
	}
	req.Header.Set(HTTPHeaderHeaders, string(hdrs))

	resp, err := h.client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("POST %s: %s", broker.RedactText(h.url), broker.RedactText(unwrapURLError(err).Error()))
	}
	defer resp.Body.Close()
	snippet, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
	// Drain a little more so the connection can be reused.
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	return statusError(resp.StatusCode, resp.Status, string(snippet))
}

// statusError maps an HTTP status to the handler outcome.
func statusError(code int, status, body string) error {
	if code >= 200 && code < 300 {
		return nil
	}
	text := "HTTP " + strconv.Itoa(code)
	if line := firstLine(body); line != "" {
		text += ": " + line
	} else if status != "" {
		text = "HTTP " + status
	}
	err := errors.New(retrycore.OneLine(text))
	if code >= 400 && code < 500 && code != http.StatusRequestTimeout && code != http.StatusTooManyRequests {
		return Permanent(err)
	}
	return err
}

func firstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if t := strings.TrimSpace(l); t != "" {
			return retrycore.OneLine(t)
		}
	}
	return ""
}

// headerSafe drops characters an HTTP header value cannot carry.
func headerSafe(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return -1
		}
		return r
	}, s)
}

func withoutDeath(d Delivery) map[string]any {
	out := make(map[string]any, len(d.Headers))
	for k, v := range d.Headers {
		if k != retrycore.HeaderDeath {
			out[k] = v
		}
	}
	return out
}

func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
