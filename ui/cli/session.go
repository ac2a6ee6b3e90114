package cli

import (
	"context"
	"errors"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/replay"
)

// Session is what the commands ask of the engine: a *replay.Session on a
// broker, or a fake in tests, so a command's output and exit code are
// tested in process. The commands that hand the session on to another
// engine (tui, watch, queues, the daemon's watch) need the real one
// (engineSession).
type Session interface {
	Close() error
	Browse(ctx context.Context, o replay.BrowseOptions) (*replay.Browse, error)
	Find(ctx context.Context, queue, id string) (broker.Message, replay.Summary, error)
	ReadyCount(ctx context.Context, queue string) (int, error)
	PlanEach(ctx context.Context, o replay.Options, sink replay.PlanSink) (replay.Plan, error)
	Replay(ctx context.Context, o replay.Options) (replay.Result, error)
	Canary(ctx context.Context, o replay.CanaryOptions) (replay.Result, []replay.CanaryStep, error)
	Delete(ctx context.Context, o replay.DeleteOptions) (replay.Result, error)
	Export(ctx context.Context, o replay.ExportOptions) (replay.Result, error)
	Import(ctx context.Context, o replay.ImportOptions) (replay.Result, error)
	PrepareEdit(ctx context.Context, queue, id string) (*replay.EditDraft, error)
	FinishEdit(ctx context.Context, d *replay.EditDraft, o replay.Options) (replay.Result, error)
	Search(ctx context.Context, o replay.SearchOptions) (*replay.SearchResult, error)
	Tail(ctx context.Context, o replay.TailOptions) (replay.TailResult, error)
	RunStatus(ctx context.Context, run string, queues []string) (replay.RunStatus, error)
	PlanProtect(ctx context.Context, queue string) (broker.LiftPlan, error)
	Protect(ctx context.Context, p broker.LiftPlan) (broker.DeliveryLimit, error)
	Publish(ctx context.Context, o replay.PublishOptions) (replay.PublishResult, error)
}

var _ Session = (*replay.Session)(nil)

// errNotEngine is a fake session given to a command that needs the real
// one; only a test can cause it.
var errNotEngine = errors.New("this command needs a session on a broker")

// engineSession is f.Session for the commands that hand the session on to
// another engine (the TUI's backend, the watch), which take a
// *replay.Session.
func (f *Factory) engineSession(ctx context.Context, what string) (*replay.Session, error) {
	s, err := f.Session(ctx, what)
	if err != nil {
		return nil, err
	}
	rs, ok := s.(*replay.Session)
	if !ok {
		_ = s.Close()
		return nil, errNotEngine
	}
	return rs, nil
}
