package broker

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"
)

func TestExplain(t *testing.T) {
	cases := []struct {
		name     string
		in       error
		sentinel error
		reason   string
	}{
		{"not found", &amqp.Error{Code: amqp.NotFound, Reason: "NOT_FOUND - no queue 'orders' in vhost '/'"}, ErrNotFound, "no queue 'orders' in vhost '/'"},
		{"wrapped", fmt.Errorf("declare: %w", &amqp.Error{Code: amqp.NotFound, Reason: "NOT_FOUND - no exchange 'x' in vhost '/'"}), ErrNotFound, "no exchange 'x' in vhost '/'"},
		{"access refused", &amqp.Error{Code: amqp.AccessRefused, Reason: "ACCESS_REFUSED - access to queue 'q' in vhost '/' refused for user 'bob'"}, ErrAccessRefused, "access to queue 'q' in vhost '/' refused for user 'bob'"},
		{"precondition", &amqp.Error{Code: amqp.PreconditionFailed, Reason: "PRECONDITION_FAILED - inequivalent arg 'x-message-ttl' for queue 'q' in vhost '/': received '100' but current is '200'"}, ErrPreconditionFailed, "inequivalent arg 'x-message-ttl' for queue 'q' in vhost '/': received '100' but current is '200'"},
		{"locked", &amqp.Error{Code: amqp.ResourceLocked, Reason: "RESOURCE_LOCKED - cannot obtain exclusive access to locked queue 'q'"}, ErrResourceLocked, "cannot obtain exclusive access to locked queue 'q'"},
		{"home node down", &amqp.Error{Code: amqp.NotFound, Reason: "NOT_FOUND - home node 'rabbit@n1' of durable queue 'q' in vhost '/' is down or inaccessible"}, ErrQueueDown, "home node 'rabbit@n1' of durable queue 'q' in vhost '/' is down or inaccessible"},
		{"4.3 queue process stopped", &amqp.Error{Code: amqp.NotFound, Reason: "NOT_FOUND - queue 'q' in vhost '/' process is stopped by supervisor"}, ErrQueueDown, "queue 'q' in vhost '/' process is stopped by supervisor"},
		{"closed", amqp.ErrClosed, nil, "connection or channel closed"},
		{"mixed-case prefix kept", &amqp.Error{Code: amqp.InternalError, Reason: "Oops - something"}, nil, "Oops - something"},
		{"password in reason", &amqp.Error{Code: amqp.InternalError, Reason: "INTERNAL_ERROR - dial amqp://u:topsecret@h/ failed"}, nil, "dial amqp://u:xxxxx@h/ failed"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := Explain(c.in)
			var be *Error
			if !errors.As(err, &be) {
				t.Fatalf("Explain gave %T %v", err, err)
			}
			if be.Reason != c.reason || err.Error() != c.reason {
				t.Errorf("reason %q, want %q", be.Reason, c.reason)
			}
			if c.sentinel != nil && !errors.Is(err, c.sentinel) {
				t.Errorf("%v is not %v", err, c.sentinel)
			}
			for _, s := range []error{ErrNotFound, ErrAccessRefused, ErrPreconditionFailed, ErrResourceLocked, ErrQueueDown} {
				if s != c.sentinel && errors.Is(err, s) {
					t.Errorf("%v also matches %v", err, s)
				}
			}
			if strings.Contains(err.Error(), "topsecret") {
				t.Error("password shown")
			}
		})
	}
}

func TestExplainPassesOthersThrough(t *testing.T) {
	if Explain(nil) != nil {
		t.Error("Explain(nil) != nil")
	}
	if err := Explain(io.EOF); err != io.EOF {
		t.Errorf("Explain(io.EOF) = %v", err)
	}
}
