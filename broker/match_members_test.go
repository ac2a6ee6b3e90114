package broker

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"
)

// TestCheckManagementCountsAStoppingNode: a connection on a node that is
// stopping (rabbitc1, default cluster name rabbitc1@vm) checked against a
// management API on another node, whose overview names the running nodes
// only: the node is found among the cluster's members (/api/nodes, running
// or not), so it is no mismatch; a cluster name no member explains still
// is one.
func TestCheckManagementCountsAStoppingNode(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/api/overview":
			_, _ = w.Write([]byte(`{"cluster_name": "rabbitc2@vm", "node": "rabbitc2@localhost", "listeners": [
				{"node": "rabbitc2@localhost", "protocol": "amqp", "port": 5682}, {"node": "rabbitc3@localhost", "protocol": "amqp", "port": 5683}]}`))
		case "/api/nodes":
			_, _ = w.Write([]byte(`[{"name": "rabbitc1@localhost"}, {"name": "rabbitc2@localhost"}, {"name": "rabbitc3@localhost"}]`))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	m, err := NewManagement(srv.URL, "/")
	if err != nil {
		t.Fatal(err)
	}
	conn := func(cluster string) *Conn {
		return &Conn{Connection: &amqp.Connection{Properties: amqp.Table{"cluster_name": cluster}}, URL: "amqp://127.0.0.1:5681/"}
	}
	ctx := context.Background()
	if err := StartManagementCheck(ctx, m, Options{URL: "amqp://127.0.0.1:5681/"}).Against(ctx, conn("rabbitc1@vm")); err != nil {
		t.Errorf("a stopping member of the cluster: %v, want no mismatch", err)
	}
	if err := StartManagementCheck(ctx, m, Options{URL: "amqp://127.0.0.1:5674/"}).Against(ctx, conn("rabbit43@vm")); !errors.Is(err, ErrManagementMismatch) {
		t.Errorf("another cluster's node: %v, want a mismatch", err)
	}
}
