package broker

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"sync"
)

// A broker URL may name several nodes of one RabbitMQ cluster, separated by
// commas: "amqp://u:p@h1:5672/,amqp://u:p@h2:5672/". RabbitMQ's clustering
// guide ("Clustering and Clients") says a client can connect to any node, is
// connected to one node at a time, and should reconnect to a different node
// when its node fails, which is why client libraries take a list of
// endpoints; amqp091-go takes one URL, so parkinglot keeps the list itself.
//
// Which node first: a random one, then the others in the order given. The
// production checklist ("Growing Node Count to Sustain More Concurrent
// Clients") spreads connections over the nodes "using a load balancer or
// making clients randomly pick a node to connect to from the provided node
// list"; several daemons given the same list thus land on different nodes
// instead of all on the first. After a connection is lost, the next dial
// starts with the node after the one that was lost (see endpoints.lost), so
// a stopped node is not tried first again.

// listSeparator finds the comma before each URL of a list: a comma (with
// optional white space around it) followed by a scheme and "://". A comma
// inside a password, a vhost or a query is not followed by a scheme, so it
// does not split.
var listSeparator = regexp.MustCompile(`\s*,\s*[a-zA-Z][a-zA-Z0-9+.-]*://`)

// SplitURLs splits a comma-separated list of URLs (AMQP or management) into
// its URLs, white space around each trimmed. A single URL gives a list of
// one; an empty string gives none.
func SplitURLs(raw string) []string {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return nil
	}
	var out []string
	for {
		loc := listSeparator.FindStringIndex(raw)
		if loc == nil {
			break
		}
		// loc covers " , amqp://": split at its comma.
		sep := loc[0] + strings.IndexByte(raw[loc[0]:loc[1]], ',')
		out = append(out, strings.TrimSpace(raw[:sep]))
		raw = strings.TrimSpace(raw[sep+1:])
	}
	return append(out, raw)
}

// IsList reports whether raw names more than one URL.
func IsList(raw string) bool { return len(SplitURLs(raw)) > 1 }

// FirstURL is the first URL of a list (raw itself when it names one).
func FirstURL(raw string) string {
	if us := SplitURLs(raw); len(us) > 0 {
		return us[0]
	}
	return raw
}

// endpoints is the dial order of one URL list, shared by every dial of the
// same list in this process (the daemon's two connections, a replay's
// consume and publish connections and their redials).
type endpoints struct {
	mu   sync.Mutex
	urls []string
	next int // index of the URL the next dial tries first
}

// registry holds one endpoints per distinct list, keyed by the list as
// given (in memory only; it holds passwords like the options do).
var registry sync.Map // string → *endpoints

// endpointsOf returns the shared dial order of urls (as split from raw),
// starting at a random URL the first time the list is seen.
func endpointsOf(raw string, urls []string) *endpoints {
	if e, ok := registry.Load(raw); ok {
		return e.(*endpoints)
	}
	e := &endpoints{urls: urls}
	if len(urls) > 1 {
		e.next = rand.IntN(len(urls))
	}
	actual, _ := registry.LoadOrStore(raw, e)
	return actual.(*endpoints)
}

// order returns the indexes to try, starting at next and wrapping around.
func (e *endpoints) order() []int {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]int, len(e.urls))
	for i := range out {
		out[i] = (e.next + i) % len(e.urls)
	}
	return out
}

// connected records that URL i answered: later dials try it first, so that
// the connections of one process tend to share a node while it is up.
func (e *endpoints) connected(i int) {
	e.mu.Lock()
	e.next = i
	e.mu.Unlock()
}

// lost records that a connection to URL i was lost: unless a dial has
// already moved on, the next dial starts with the URL after it.
func (e *endpoints) lost(i int) {
	e.mu.Lock()
	if e.next == i {
		e.next = (i + 1) % len(e.urls)
	}
	e.mu.Unlock()
}
