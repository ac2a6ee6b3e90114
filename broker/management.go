package broker

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// ErrNoManagement marks features that need the management HTTP API when it
// is not configured or not answering.
var ErrNoManagement = errors.New("management API unavailable")

// Management is a small client of RabbitMQ's management HTTP API, scoped to
// one vhost. It may know several nodes of one cluster (any node answers for
// the whole cluster: RabbitMQ's clustering guide, "Clustering and
// Observability"): a request that gets no answer from one is sent to the
// next, and the node that answered is asked first from then on.
type Management struct {
	nodes []mgmtNode
	vhost string
	http  *http.Client

	mu      sync.Mutex
	current int // index into nodes of the one asked first
}

// mgmtNode is one management endpoint.
type mgmtNode struct {
	base     *url.URL // without credentials
	user     string
	password string
}

// ManagementURL derives the default management URL from an AMQP URL:
// http://<amqp host>:15672 with the AMQP credentials. For a list of AMQP
// URLs it derives one management URL per AMQP URL (AssumedManagementURLs),
// each once, comma-separated.
func ManagementURL(amqpURL string) string {
	var out []string
	for _, u := range AssumedManagementURLs(amqpURL) {
		if u == "" {
			return ""
		}
		if !slices.Contains(out, u) {
			out = append(out, u)
		}
	}
	return strings.Join(out, ",")
}

// AssumedManagementURLs pairs each URL of an AMQP list with the management
// URL ManagementURL assumes for it, in the list's order ("" for a URL that
// does not parse).
func AssumedManagementURLs(amqpURL string) []string {
	var out []string
	for _, raw := range SplitURLs(amqpURL) {
		uri, err := amqp.ParseURI(raw)
		if err != nil {
			out = append(out, "")
			continue
		}
		u := url.URL{Scheme: "http", Host: net.JoinHostPort(uri.Host, "15672"), User: url.UserPassword(uri.Username, uri.Password)}
		out = append(out, u.String())
	}
	return out
}

// NewManagement builds a client for rawURL (credentials in the URL; several
// URLs of one cluster separated by commas) and vhost.
func NewManagement(rawURL, vhost string) (*Management, error) {
	urls := SplitURLs(rawURL)
	if len(urls) == 0 {
		return nil, fmt.Errorf("%w: empty management URL: want http(s)://user:pass@host:15672", ErrBadURL)
	}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	m := &Management{vhost: vhost, http: &http.Client{Timeout: 15 * time.Second, Transport: transport}}
	for _, raw := range urls {
		u, err := url.Parse(raw)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("%w: management URL %q: want http(s)://user:pass@host:15672", ErrBadURL, Redact(raw))
		}
		var n mgmtNode
		if u.User != nil {
			n.user = u.User.Username()
			n.password, _ = u.User.Password()
		}
		u.User = nil
		u.Path = strings.TrimSuffix(u.Path, "/")
		n.base = u
		m.nodes = append(m.nodes, n)
	}
	if m.vhost == "" {
		m.vhost = "/"
	}
	return m, nil
}

// Close releases idle HTTP connections.
func (m *Management) Close() { m.http.CloseIdleConnections() }

// URL returns the management URL without credentials: the one asked first.
func (m *Management) URL() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.nodes[m.current].base.String()
}

// URLs returns every management URL the client knows, without credentials.
func (m *Management) URLs() []string {
	out := make([]string, len(m.nodes))
	for i, n := range m.nodes {
		out[i] = n.base.String()
	}
	return out
}

// Vhost is the vhost the client is scoped to.
func (m *Management) Vhost() string { return m.vhost }

// do sends one request, to the node that answered last and then, while
// none answers (no HTTP response, or 502/503/504), to the others in turn.
// path segments are escaped by the caller.
func (m *Management) do(ctx context.Context, method, path string, body, out any) error {
	var payload []byte
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		payload = b
	}
	m.mu.Lock()
	first := m.current
	m.mu.Unlock()
	var unanswered []string
	for k := range m.nodes {
		i := (first + k) % len(m.nodes)
		answered, err := m.doNode(ctx, m.nodes[i], method, path, payload, body != nil, out)
		if answered {
			if i != first {
				m.mu.Lock()
				m.current = i
				m.mu.Unlock()
			}
			return err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		unanswered = append(unanswered, m.nodes[i].base.String())
	}
	if len(m.nodes) == 1 {
		return fmt.Errorf("%w: %s is not answering", ErrNoManagement, unanswered[0])
	}
	return fmt.Errorf("%w: none of %s is answering", ErrNoManagement, strings.Join(unanswered, ", "))
}

// doNode sends one request to one node; answered is false when the node
// gave no usable answer and the next node should be asked.
func (m *Management) doNode(ctx context.Context, n mgmtNode, method, path string, payload []byte, hasBody bool, out any) (answered bool, err error) {
	var rd io.Reader
	if hasBody {
		rd = bytes.NewReader(payload)
	}
	req, err := http.NewRequestWithContext(ctx, method, n.base.String()+"/api"+path, rd)
	if err != nil {
		return true, err
	}
	req.SetBasicAuth(n.user, n.password)
	if hasBody {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := m.http.Do(req)
	if err != nil {
		return false, nil
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	switch {
	case resp.StatusCode == http.StatusBadGateway || resp.StatusCode == http.StatusServiceUnavailable || resp.StatusCode == http.StatusGatewayTimeout:
		if len(m.nodes) > 1 {
			return false, nil
		}
		return true, fmt.Errorf("management API %s %s: %s: %s", method, path, resp.Status, Truncate(strings.TrimSpace(string(data)), 200))
	case resp.StatusCode == http.StatusUnauthorized:
		return true, fmt.Errorf("%w: %s refused the credentials of user %q", ErrAccessRefused, n.base.String(), n.user)
	case resp.StatusCode == http.StatusForbidden:
		return true, fmt.Errorf("%w: user %q may not %s %s on the management API", ErrAccessRefused, n.user, method, path)
	case resp.StatusCode == http.StatusNotFound:
		return true, fmt.Errorf("%w: %s", ErrNotFound, path)
	case resp.StatusCode >= 300:
		return true, fmt.Errorf("management API %s %s: %s: %s", method, path, resp.Status, Truncate(strings.TrimSpace(string(data)), 200))
	}
	if out != nil && len(data) > 0 {
		if err := json.Unmarshal(data, out); err != nil {
			return true, fmt.Errorf("management API %s: unexpected answer: %w", path, err)
		}
	}
	return true, nil
}

func (m *Management) vpath(kind string, names ...string) string {
	p := "/" + kind + "/" + url.PathEscape(m.vhost)
	for _, n := range names {
		p += "/" + url.PathEscape(n)
	}
	return p
}

// Overview is the part of /api/overview parkinglot reads.
type Overview struct {
	RabbitMQVersion   string `json:"rabbitmq_version"`
	ManagementVersion string `json:"management_version"`
	ClusterName       string `json:"cluster_name"`
	// Listeners are every running node's (ListenerNode reads them).
	Listeners []Listener `json:"listeners"`
}

// Overview reads the server version (and checks the API answers).
func (m *Management) Overview(ctx context.Context) (Overview, error) {
	var o Overview
	err := m.do(ctx, http.MethodGet, "/overview", nil, &o)
	return o, err
}

// QueueInfo is a queue as the management API reports it.
type QueueInfo struct {
	Name                   string           `json:"name"`
	Vhost                  string           `json:"vhost"`
	Type                   string           `json:"type"` // classic | quorum | stream
	Durable                bool             `json:"durable"`
	AutoDelete             bool             `json:"auto_delete"`
	Exclusive              bool             `json:"exclusive"`
	Arguments              amqp.Table       `json:"arguments"`
	Policy                 string           `json:"policy"`
	OperatorPolicy         string           `json:"operator_policy"`
	EffectivePolicy        PolicyDefinition `json:"effective_policy_definition"`
	Messages               int64            `json:"messages"`
	MessagesReady          int64            `json:"messages_ready"`
	MessagesUnacknowledged int64            `json:"messages_unacknowledged"`
	// MessagesDelayed: held back by the queue's delayed retry (RabbitMQ
	// 4.3+), counted in neither ready nor unacknowledged.
	MessagesDelayed int64  `json:"messages_delayed"`
	Consumers       int64  `json:"consumers"`
	State           string `json:"state"`
	// Node is a classic queue's home node; Leader, Members and Online are a
	// quorum queue's leader, replicas and replicas online (RabbitMQ nodes).
	Node         string   `json:"node"`
	Leader       string   `json:"leader"`
	Members      []string `json:"members"`
	Online       []string `json:"online"`
	MessageStats struct {
		// Publish counts the messages published into the queue by
		// clients, when the broker's statistics have it (absent for a
		// queue only dead-lettered into).
		Publish        *int64 `json:"publish"`
		PublishDetails struct {
			Rate float64 `json:"rate"`
		} `json:"publish_details"`
	} `json:"message_stats"`
}

// Home is the node the queue is served from: a quorum queue's leader, a
// classic queue's node ("" when the management API does not say).
func (q QueueInfo) Home() string {
	if q.Leader != "" {
		return q.Leader
	}
	return q.Node
}

// PolicyDefinition is a policy's definition. The management API writes a
// queue without one as {}, [] or "" depending on the version; all three
// read as empty.
type PolicyDefinition map[string]any

// UnmarshalJSON reads an object, and takes an empty array, an empty string
// or null for no definition.
func (d *PolicyDefinition) UnmarshalJSON(b []byte) error {
	switch strings.TrimSpace(string(b)) {
	case "[]", `""`, "null":
		*d = nil
		return nil
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return fmt.Errorf("effective_policy_definition: %w", err)
	}
	*d = m
	return nil
}

// PublishRate is messages per second published to the queue, when known.
func (q QueueInfo) PublishRate() float64 { return q.MessageStats.PublishDetails.Rate }

// Queues lists the vhost's queues.
func (m *Management) Queues(ctx context.Context) ([]QueueInfo, error) {
	var qs []QueueInfo
	if err := m.do(ctx, http.MethodGet, m.vpath("queues"), nil, &qs); err != nil {
		if errors.Is(err, ErrNotFound) {
			return nil, fmt.Errorf("%w: vhost %q", ErrNotFound, m.vhost)
		}
		return nil, err
	}
	for i := range qs {
		qs[i].fixTypes()
	}
	return qs, nil
}

// Queue reads one queue. The empty name is ErrNotFound without asking:
// no queue has it, and the path it would make lists every queue.
func (m *Management) Queue(ctx context.Context, name string) (QueueInfo, error) {
	var q QueueInfo
	if name == "" {
		return q, fmt.Errorf("%w: no queue has the empty name", ErrNotFound)
	}
	if err := m.do(ctx, http.MethodGet, m.vpath("queues", name), nil, &q); err != nil {
		if errors.Is(err, ErrNotFound) {
			return q, fmt.Errorf("%w: no queue %q in vhost %q", ErrNotFound, name, m.vhost)
		}
		return q, err
	}
	q.fixTypes()
	return q, nil
}

// QueueArguments implements retrycore.QueueArgs.
func (m *Management) QueueArguments(ctx context.Context, name string) (amqp.Table, error) {
	q, err := m.Queue(ctx, name)
	return q.Arguments, err
}

// fixTypes turns JSON numbers in arguments into int64 so they compare with
// what declare uses, and fills the type for brokers that omit it.
func (q *QueueInfo) fixTypes() {
	for k, v := range q.Arguments {
		if f, ok := v.(float64); ok && f == float64(int64(f)) {
			q.Arguments[k] = int64(f)
		}
	}
	if q.Type == "" {
		q.Type = "classic"
		if t, ok := q.Arguments["x-queue-type"].(string); ok {
			q.Type = t
		}
	}
}

// DeliveryLimit is the effective delivery limit of a quorum queue.
type DeliveryLimit struct {
	// None is true when RabbitMQ never drops a message for its delivery count.
	None bool
	// Limit is the highest x-delivery-count a message survives a give-back
	// to; 0 means the first give-back already drops it.
	Limit  int64
	Source string // "x-delivery-limit argument", "policy p", "RabbitMQ 4.x default", …
}

// Unlimited reports whether the queue never drops a message for its
// delivery count.
func (d DeliveryLimit) Unlimited() bool { return d.None }

// EffectiveDeliveryLimit works out the delivery limit RabbitMQ applies to a
// quorum queue: the smaller of the x-delivery-limit argument and the policy
// (operator policies are merged into the effective definition). From 4.0 a
// negative value disables the limit and an unset one is 20. On 3.x an unset
// limit is none, but a negative or zero one is taken literally (measured on
// 3.10.8: x-delivery-limit -1 dropped a message on its first give-back).
func EffectiveDeliveryLimit(q QueueInfo, server Version) DeliveryLimit {
	if q.Type != "quorum" {
		return DeliveryLimit{None: true, Source: q.Type + " queues have no delivery limit"}
	}
	v4 := server.AtLeast(4, 0, 0) || !server.Known() // unknown: assume the stricter 4.x rules
	var best *DeliveryLimit
	disabled := false
	consider := func(v any, source string) {
		n, ok := toInt64(v)
		if !ok {
			return
		}
		if n < 0 && v4 {
			disabled = true
			return
		}
		if n < 0 {
			n = 0
		}
		if best == nil || n < best.Limit {
			best = &DeliveryLimit{Limit: n, Source: source}
		}
	}
	consider(q.Arguments["x-delivery-limit"], "x-delivery-limit argument")
	policy := "policy " + q.Policy
	if q.OperatorPolicy != "" {
		policy += " / operator policy " + q.OperatorPolicy
	}
	consider(q.EffectivePolicy["delivery-limit"], policy)
	switch {
	case best != nil:
		return *best
	case disabled:
		return DeliveryLimit{None: true, Source: "delivery limit disabled (-1)"}
	case v4 && server.Known():
		return DeliveryLimit{Limit: 20, Source: "RabbitMQ " + server.String() + " default"}
	case v4:
		return DeliveryLimit{Limit: 20, Source: "server version unknown: assuming the 4.x default of 20"}
	}
	return DeliveryLimit{None: true, Source: "no limit set (RabbitMQ " + server.String() + ")"}
}

func toInt64(v any) (int64, bool) {
	if n, ok := IntValue(v); ok {
		return n, true
	}
	switch n := v.(type) {
	case float64: // JSON numbers from the management API
		return int64(n), n == float64(int64(n))
	case string:
		i, err := strconv.ParseInt(n, 10, 64)
		return i, err == nil
	}
	return 0, false
}

// ExchangeInfo is an exchange as the management API reports it.
type ExchangeInfo struct {
	Name      string     `json:"name"`
	Type      string     `json:"type"`
	Arguments amqp.Table `json:"arguments"`
}

// Exchange reads one exchange ("" is the default exchange).
func (m *Management) Exchange(ctx context.Context, name string) (ExchangeInfo, error) {
	var e ExchangeInfo
	p := m.vpath("exchanges", name)
	if name == "" {
		p = m.vpath("exchanges", "amq.default")
	}
	if err := m.do(ctx, http.MethodGet, p, nil, &e); err != nil {
		if errors.Is(err, ErrNotFound) {
			return e, fmt.Errorf("%w: no exchange %q in vhost %q", ErrNotFound, name, m.vhost)
		}
		return e, err
	}
	return e, nil
}

// Binding is one binding from an exchange.
type Binding struct {
	Source          string     `json:"source"`
	Destination     string     `json:"destination"`
	DestinationType string     `json:"destination_type"` // queue | exchange
	RoutingKey      string     `json:"routing_key"`
	Arguments       amqp.Table `json:"arguments"`
}

// Bindings lists the bindings whose source is exchange.
func (m *Management) Bindings(ctx context.Context, exchange string) ([]Binding, error) {
	var bs []Binding
	err := m.do(ctx, http.MethodGet, m.vpath("exchanges", exchange)+"/bindings/source", nil, &bs)
	return bs, err
}

// ConnectionInfo is an open AMQP connection.
type ConnectionInfo struct {
	Name             string         `json:"name"`
	Node             string         `json:"node"` // the RabbitMQ node it is on
	User             string         `json:"user"`
	Vhost            string         `json:"vhost"`
	ClientProperties map[string]any `json:"client_properties"`
}

// ClientName is the connection_name the client gave, if any.
func (c ConnectionInfo) ClientName() string {
	s, _ := c.ClientProperties["connection_name"].(string)
	return s
}

// Connections lists open connections (all vhosts the user may see).
func (m *Management) Connections(ctx context.Context) ([]ConnectionInfo, error) {
	var cs []ConnectionInfo
	err := m.do(ctx, http.MethodGet, "/connections", nil, &cs)
	return cs, err
}

// CloseConnection force-closes a connection by its server-side name.
func (m *Management) CloseConnection(ctx context.Context, name string) error {
	return m.do(ctx, http.MethodDelete, "/connections/"+url.PathEscape(name), nil, nil)
}

// PutShovel creates a dynamic shovel in the vhost.
func (m *Management) PutShovel(ctx context.Context, name string, value map[string]any) error {
	return m.do(ctx, http.MethodPut, m.vpath("parameters/shovel", name), map[string]any{"value": value}, nil)
}

// DeleteShovel removes a dynamic shovel.
func (m *Management) DeleteShovel(ctx context.Context, name string) error {
	err := m.do(ctx, http.MethodDelete, m.vpath("parameters/shovel", name), nil, nil)
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	return err
}

// PutPolicy sets a policy in the vhost.
func (m *Management) PutPolicy(ctx context.Context, name, pattern, applyTo string, priority int, def map[string]any) error {
	body := map[string]any{"pattern": pattern, "apply-to": applyTo, "priority": priority, "definition": def}
	return m.do(ctx, http.MethodPut, m.vpath("policies", name), body, nil)
}

// DeletePolicy removes a policy; a missing one is not an error.
func (m *Management) DeletePolicy(ctx context.Context, name string) error {
	err := m.do(ctx, http.MethodDelete, m.vpath("policies", name), nil, nil)
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	return err
}
