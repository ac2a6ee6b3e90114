package cli

import (
	"errors"
	"fmt"
	"testing"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/replay"
	"github.com/parkinglot/parkinglot/retrycore"
)

// The engine's plan speaks of what is wrong; the command line adds the
// flag that mends it, without changing the plan it was given.
func TestHintPlanAddsTheTargetFlag(t *testing.T) {
	fanout := retrycore.Destination{Exchange: "events", RoutingKey: "order.paid"}
	p := replay.Plan{
		Items: []replay.PlanItem{
			{ID: "a", Source: replay.SourceTargetQueue},
			{ID: "b", Source: retrycore.SourceOriginalHeaders},
		},
		Routes: []replay.RoutePreview{
			{Destination: fanout, Available: true, Queues: []string{"billing", "shipping"}, FailedQueues: []string{"billing"},
				Warning: "also reaches other queues than the one that failed (billing): shipping — other consumers would get the messages again"},
			{Destination: fanout, Available: true, Queues: []string{"x", "y"}, Warning: "reaches 2 queues (x, y): every consumer of them gets the messages again"},
		},
	}
	got := hintPlan(p)
	if got.Items[0].Source != "--target queue" || got.Items[1].Source != retrycore.SourceOriginalHeaders {
		t.Errorf("sources %q %q", got.Items[0].Source, got.Items[1].Source)
	}
	if want := "also reaches other queues than the one that failed (billing): shipping — other consumers would get the messages again; --target queue sends them to billing alone"; got.Routes[0].Warning != want {
		t.Errorf("warning %q\nwant    %q", got.Routes[0].Warning, want)
	}
	if got.Routes[1].Warning != p.Routes[1].Warning {
		t.Errorf("a route without failed queues got %q", got.Routes[1].Warning)
	}
	if p.Items[0].Source != replay.SourceTargetQueue || p.Routes[0].Warning == got.Routes[0].Warning {
		t.Error("hintPlan changed the plan it was given")
	}
}

// A route preview the management API could not give says which flag
// brings it back, as the command's last line would.
func TestHintPlanNamesTheManagementFlag(t *testing.T) {
	why := fmt.Errorf("%w: no management URL configured", broker.ErrNoManagement)
	p := replay.Plan{Routes: []replay.RoutePreview{
		{Destination: retrycore.Destination{Exchange: "orders"}, Err: "route preview unavailable: " + why.Error(), Unavailable: why},
		{Destination: retrycore.Destination{Exchange: "x"}, Err: "route preview unavailable: timeout", Unavailable: errors.New("timeout")},
	}}
	got := hintPlan(p)
	if want := p.Routes[0].Err + " (enable rabbitmq_management or pass --management-url)"; got.Routes[0].Err != want {
		t.Errorf("err %q\nwant %q", got.Routes[0].Err, want)
	}
	if got.Routes[1].Err != p.Routes[1].Err {
		t.Errorf("an error no flag mends got %q", got.Routes[1].Err)
	}
}
