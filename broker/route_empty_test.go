package broker_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker"
)

// The default exchange with an empty routing key reaches no queue, and the
// route preview says so without asking the management API: the empty
// queue name makes /queues/VHOST/, which lists every queue (an array the
// preview cannot read as one queue).
func TestPreviewRouteEmptyKeyOnDefaultExchangeAsksNothing(t *testing.T) {
	var mu sync.Mutex
	var asked []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		asked = append(asked, r.URL.RawPath+" "+r.URL.Path)
		mu.Unlock()
		_, _ = w.Write([]byte(`[]`))
	}))
	defer srv.Close()
	m, err := broker.NewManagement(srv.URL, "/")
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	ctx := context.Background()

	for _, h := range []amqp.Table{nil, {"CC": []any{""}}} {
		r, err := m.PreviewRoute(ctx, "", "", h)
		if err != nil {
			t.Fatalf("headers %v: PreviewRoute: %v", h, err)
		}
		if !r.Unroutable() {
			t.Errorf("headers %v: route %+v, want unroutable", h, r)
		}
	}
	if _, err := m.Queue(ctx, ""); !errors.Is(err, broker.ErrNotFound) {
		t.Errorf("Queue(\"\") = %v, want ErrNotFound", err)
	}
	if len(asked) > 0 {
		t.Errorf("asked the management API %q", asked)
	}
}
