package cli

import (
	"context"
	"testing"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/replay"
)

// fakeSession is a Session in memory, the CLI's seam like the TUI's fake
// Backend: each method runs the func a test set, and a method it did not
// set fails the test (the command asked the engine for something the test
// did not expect).
type fakeSession struct {
	t      testing.TB
	closed bool

	browse      func(replay.BrowseOptions) (*replay.Browse, error)
	find        func(queue, id string) (broker.Message, replay.Summary, error)
	readyCount  func(queue string) (int, error)
	planEach    func(replay.Options, replay.PlanSink) (replay.Plan, error)
	replay      func(replay.Options) (replay.Result, error)
	canary      func(replay.CanaryOptions) (replay.Result, []replay.CanaryStep, error)
	delete      func(replay.DeleteOptions) (replay.Result, error)
	export      func(replay.ExportOptions) (replay.Result, error)
	imp         func(replay.ImportOptions) (replay.Result, error)
	prepareEdit func(queue, id string) (*replay.EditDraft, error)
	finishEdit  func(*replay.EditDraft, replay.Options) (replay.Result, error)
	search      func(replay.SearchOptions) (*replay.SearchResult, error)
	tail        func(replay.TailOptions) (replay.TailResult, error)
	runStatus   func(run string, queues []string) (replay.RunStatus, error)
	planProtect func(queue string) (broker.LiftPlan, error)
	protect     func(broker.LiftPlan) (broker.DeliveryLimit, error)
	publish     func(replay.PublishOptions) (replay.PublishResult, error)
}

var _ Session = (*fakeSession)(nil)

// fakeFactory is testFactory whose session is fake.
func fakeFactory(t *testing.T, s *fakeSession) (*Factory, *iostreamsBuffers) {
	t.Helper()
	f, b := testFactory(t)
	s.t = t
	f.OpenSession = func(context.Context, string) (Session, error) { return s, nil }
	return f, b
}

func (s *fakeSession) unexpected(method string) {
	s.t.Helper()
	s.t.Fatalf("the command called Session.%s, which the test did not expect", method)
}

func (s *fakeSession) Close() error { s.closed = true; return nil }

func (s *fakeSession) Browse(_ context.Context, o replay.BrowseOptions) (*replay.Browse, error) {
	if s.browse == nil {
		s.unexpected("Browse")
	}
	return s.browse(o)
}

func (s *fakeSession) Find(_ context.Context, queue, id string) (broker.Message, replay.Summary, error) {
	if s.find == nil {
		s.unexpected("Find")
	}
	return s.find(queue, id)
}

func (s *fakeSession) ReadyCount(_ context.Context, queue string) (int, error) {
	if s.readyCount == nil {
		s.unexpected("ReadyCount")
	}
	return s.readyCount(queue)
}

func (s *fakeSession) PlanEach(_ context.Context, o replay.Options, sink replay.PlanSink) (replay.Plan, error) {
	if s.planEach == nil {
		s.unexpected("PlanEach")
	}
	return s.planEach(o, sink)
}

func (s *fakeSession) Replay(_ context.Context, o replay.Options) (replay.Result, error) {
	if s.replay == nil {
		s.unexpected("Replay")
	}
	return s.replay(o)
}

func (s *fakeSession) Canary(_ context.Context, o replay.CanaryOptions) (replay.Result, []replay.CanaryStep, error) {
	if s.canary == nil {
		s.unexpected("Canary")
	}
	return s.canary(o)
}

func (s *fakeSession) Delete(_ context.Context, o replay.DeleteOptions) (replay.Result, error) {
	if s.delete == nil {
		s.unexpected("Delete")
	}
	return s.delete(o)
}

func (s *fakeSession) Export(_ context.Context, o replay.ExportOptions) (replay.Result, error) {
	if s.export == nil {
		s.unexpected("Export")
	}
	return s.export(o)
}

func (s *fakeSession) Import(_ context.Context, o replay.ImportOptions) (replay.Result, error) {
	if s.imp == nil {
		s.unexpected("Import")
	}
	return s.imp(o)
}

func (s *fakeSession) PrepareEdit(_ context.Context, queue, id string) (*replay.EditDraft, error) {
	if s.prepareEdit == nil {
		s.unexpected("PrepareEdit")
	}
	return s.prepareEdit(queue, id)
}

func (s *fakeSession) FinishEdit(_ context.Context, d *replay.EditDraft, o replay.Options) (replay.Result, error) {
	if s.finishEdit == nil {
		s.unexpected("FinishEdit")
	}
	return s.finishEdit(d, o)
}

func (s *fakeSession) Search(_ context.Context, o replay.SearchOptions) (*replay.SearchResult, error) {
	if s.search == nil {
		s.unexpected("Search")
	}
	return s.search(o)
}

func (s *fakeSession) Tail(_ context.Context, o replay.TailOptions) (replay.TailResult, error) {
	if s.tail == nil {
		s.unexpected("Tail")
	}
	return s.tail(o)
}

func (s *fakeSession) RunStatus(_ context.Context, run string, queues []string) (replay.RunStatus, error) {
	if s.runStatus == nil {
		s.unexpected("RunStatus")
	}
	return s.runStatus(run, queues)
}

func (s *fakeSession) PlanProtect(_ context.Context, queue string) (broker.LiftPlan, error) {
	if s.planProtect == nil {
		s.unexpected("PlanProtect")
	}
	return s.planProtect(queue)
}

func (s *fakeSession) Publish(_ context.Context, o replay.PublishOptions) (replay.PublishResult, error) {
	if s.publish == nil {
		s.unexpected("Publish")
	}
	return s.publish(o)
}

func (s *fakeSession) Protect(_ context.Context, p broker.LiftPlan) (broker.DeliveryLimit, error) {
	if s.protect == nil {
		s.unexpected("Protect")
	}
	return s.protect(p)
}

// planOf is a fake PlanEach that hands out p's items, refusals and
// missing ids as the engine's does: to the sink's funcs when set, else
// items only counted and the first replay.MaxListedFailures of the others
// kept. The plan returned has the counts, and no items.
func planOf(p replay.Plan) func(replay.Options, replay.PlanSink) (replay.Plan, error) {
	return func(o replay.Options, sink replay.PlanSink) (replay.Plan, error) {
		out := p
		out.Queue = o.Queue
		out.Items, out.Refused, out.Missing = nil, nil, nil
		out.Chosen, out.RefusedCount, out.MissingCount = len(p.Items), len(p.Refused), len(p.Missing)
		for _, it := range p.Items {
			if sink.Item != nil {
				if err := sink.Item(it); err != nil {
					return out, err
				}
			}
		}
		for _, r := range p.Refused {
			if sink.Refused != nil {
				if err := sink.Refused(r); err != nil {
					return out, err
				}
			} else if len(out.Refused) < replay.MaxListedFailures {
				out.Refused = append(out.Refused, r)
			}
		}
		for _, id := range p.Missing {
			if sink.Missing != nil {
				if err := sink.Missing(id); err != nil {
					return out, err
				}
			} else if len(out.Missing) < replay.MaxListedFailures {
				out.Missing = append(out.Missing, id)
			}
		}
		return out, nil
	}
}
