package broker

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"
)

// Which node a connection is on. RabbitMQ's server properties do not say:
// it sends cluster_name (the same on every node), product, version,
// platform, copyright, information and capabilities. The management API's
// connection objects carry the node (field "node"), so NodeOf asks it: first
// by the name RabbitMQ gives the connection ("client ip:port -> server
// ip:port", read from the socket's two ends), then, when a proxy or NAT
// makes the addresses differ, by the connection's parkinglot_connection_id
// client property in the listing.

// ServerSideName is the name RabbitMQ gives the connection in its
// management API: "<client address> -> <server address>" as the client
// sees them (it differs from the server's view behind a proxy or NAT).
func (c *Conn) ServerSideName() string {
	return c.LocalAddr().String() + " -> " + c.RemoteAddr().String()
}

// NodeOf returns the RabbitMQ node c is on ("rabbit@host"). The management
// API lists a new connection only after its statistics arrive (up to a few
// seconds): NodeOf asks again every 250 ms until ctx ends, and then returns
// an error wrapping ErrNotFound.
func (m *Management) NodeOf(ctx context.Context, c *Conn) (string, error) {
	if c == nil {
		return "", errors.New("node of a connection: no connection")
	}
	name := c.ServerSideName()
	for {
		var ci ConnectionInfo
		err := m.do(ctx, http.MethodGet, "/connections/"+url.PathEscape(name), nil, &ci)
		if err == nil && ci.Node != "" {
			return ci.Node, nil
		}
		if err != nil && !errors.Is(err, ErrNotFound) {
			return "", err
		}
		// Not listed under the name this side sees: look for its id.
		conns, err := m.Connections(ctx)
		if err != nil {
			return "", err
		}
		for _, ci := range conns {
			if id, _ := ci.ClientProperties[clientIDProperty].(string); id == c.ID && ci.Node != "" {
				return ci.Node, nil
			}
		}
		t := time.NewTimer(250 * time.Millisecond)
		select {
		case <-ctx.Done():
			t.Stop()
			return "", fmt.Errorf("%w: the management API does not list connection %s (yet)", ErrNotFound, name)
		case <-t.C:
		}
	}
}
