package ui

import (
	"context"
	"time"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/replay"
	"github.com/parkinglot/parkinglot/replay/watch"
	"github.com/parkinglot/parkinglot/retrycore"
)

// Backend is everything the TUI asks of the broker side. The real one
// adapts *replay.Session (NewSessionBackend); model tests use a fake. Its
// requests are the TUI's own, so that the adapter is the only code that
// calls replay's operations; the answers and the other files use replay's
// values and pure rules as they are (see the package doc).
type Backend interface {
	// Describe names the connection for the status bar: redacted URL and
	// vhost.
	Describe() string
	// Cluster says which node the connection is on (Conn.Node "" while the
	// management API does not list it yet: ask again later) and lists the
	// cluster's nodes.
	Cluster(ctx context.Context) (Cluster, error)
	// Queues lists the vhost's queues, parking lots first.
	Queues(ctx context.Context) ([]QueueRow, error)
	// ParkingLotDefaults are the config's replay defaults for a parking
	// lot (parking_lots: QUEUE: {to, rate}); zero when it names none.
	ParkingLotDefaults(queue string) replay.ParkingLot
	// ParkingLots reads each parking lot by the rules of `parkinglot
	// watch`: depth, oldest age and the last hour's arrivals (one read)
	// and, with scan, its error groups (a harmless browse pass of each,
	// as `queues --scan`; every message is given back when it returns).
	// The messages of the busy parking lots (a job acts on them) are not
	// read: their depth only.
	ParkingLots(ctx context.Context, scan bool, busy []string) (Lots, error)
	// Browse reads a queue without taking anything: summaries stream to
	// OnBatch, and every held message has been given back when it returns.
	Browse(ctx context.Context, req BrowseRequest) (BrowseResult, error)
	// Search looks for req.Query in every parking lot (as Queues marks
	// them), queue by queue, without taking anything: OnQueue hears each
	// queue begin, OnMatch each match as it is found.
	Search(ctx context.Context, req SearchRequest) (replay.SearchResult, error)
	// Plan says what a replay would do: destinations, how each was
	// resolved, which queues each reaches, and warnings.
	Plan(ctx context.Context, req ActionRequest) (Plan, error)
	// Replay sends the chosen messages and removes each from the parking
	// lot once the broker confirmed a routed copy.
	Replay(ctx context.Context, req ActionRequest) (replay.Result, error)
	// Delete removes the chosen messages.
	Delete(ctx context.Context, req ActionRequest) (replay.Result, error)
	// Export writes the chosen messages to path as JSON Lines, leaving
	// them in the queue.
	Export(ctx context.Context, req ActionRequest, path string) (replay.Result, error)
	// Import publishes the export file at path back into req.Queue
	// (replay.Session.Import with the queue as destination), the whole
	// file checked first.
	Import(ctx context.Context, req ActionRequest, path string) (replay.Result, error)
	// PrepareEdit writes the body of message id to a private temporary
	// file for $EDITOR.
	PrepareEdit(ctx context.Context, queue, id string) (*EditDraft, error)
	// FinishEdit validates the edited body (invalid JSON is an error and
	// nothing is sent) and replays the edited message.
	FinishEdit(ctx context.Context, d *EditDraft, req ActionRequest) (replay.Result, error)
	// DiscardEdit removes a draft the user gave up on.
	DiscardEdit(d *EditDraft)
	// Tail hands onArrival each message that enters queue, as it arrives,
	// until ctx ends (replay.Session.Tail: a tap, the queue untouched),
	// after calling onReady once its tap is open, and onGap after a lost
	// connection once the queue is tapped again. A queue that cannot be
	// tapped is an error at once (wrapping broker.ErrUntappable when only
	// the default exchange feeds it).
	Tail(ctx context.Context, queue string, onReady func(), onArrival func(replay.Summary), onGap func(replay.TailGap)) error
}

// QueueRow is one queue on the queues screen.
type QueueRow struct {
	broker.QueueInfo
	// ParkingLot: declared in the config, dead-lettered into by other
	// queues, or named like one (*.dlq, *dead-letter*, *_error, *.error*,
	// *parking*); Why says which (replay.QueueRow).
	ParkingLot bool
	Why        string
	// Offline and Unavailable: the replicas or home node down, and why the
	// queue cannot be used now, in words (replay.QueueRow).
	Offline     []string
	Unavailable string
}

// BrowseRequest asks for one non-destructive pass over a queue.
type BrowseRequest struct {
	Queue string
	Limit int // 0: every message ready when the pass begins
	// Filter is an expr-lang expression over each message (replay's
	// FilterEnv: error, attempts, age, headers, body, …); "" lists all.
	Filter string
	// OnBatch receives summaries as they arrive. It may be called from
	// another goroutine; the slice is not reused by the caller.
	OnBatch func([]replay.Summary)
}

// SearchRequest asks for one search across the parking lots.
type SearchRequest struct {
	// Queues to search; empty: every parking lot.
	Queues []string
	Query  replay.Query
	// Keep bounds SearchResult.Matches (replay.SearchOptions.Keep; below
	// 0: none kept, the caller keeps what OnMatch hands it).
	Keep int
	// OnQueue and OnMatch are called from the worker goroutine.
	OnQueue func(queue string)
	OnMatch func(queue string, s replay.Summary)
	// Skip are parking lots a job acts on: not read.
	Skip []string
}

// BrowseResult is what a finished pass leaves behind. The messages
// themselves are back in the queue; Messages keeps private copies (a 0600
// spool file) so that one can be shown without another pass.
type BrowseResult struct {
	Messages MessageSource // nil when the backend kept no copies
	Facts    broker.QueueFacts
	Report   broker.PassReport
}

// MessageSource reads back the full message of a summary (by
// Summary.Index). *broker.Spool implements it.
type MessageSource interface {
	Get(index int) (broker.Message, error)
	Close() error
}

// ActionRequest chooses messages and says what to do with them.
type ActionRequest struct {
	Queue  string
	Select replay.Selector
	// To overrides the resolved origin ("EXCHANGE:ROUTING_KEY" typed in the
	// dialog); nil keeps it.
	To     *retrycore.Destination
	Target replay.Target
	Rate   float64 // messages per second; 0: the configured default or unlimited
	// Limit, when > 0, is how many messages the action takes at most: the
	// count the dialog showed and the person confirmed (replay.Options.Limit),
	// so that a message parked since with a chosen id is not taken too.
	Limit int
	// Progress receives each step; it is called from the worker goroutine.
	Progress func(replay.Event)
	// Canary, for a replay, are a canary's step sizes, nil for a plain
	// replay; CanaryWait how long each step is
	// watched (0: replay.DefaultCanaryWait). OnCanary hears each step's
	// wait and end, and Proceed is asked after a step none of whose
	// messages came back (replay.CanaryOptions); both are called from the
	// worker goroutine.
	Canary     []int
	CanaryWait time.Duration
	OnCanary   func(CanaryUpdate)
	Proceed    func(ctx context.Context, st replay.CanaryStep) bool
}

// CanaryUpdate is a canary step as it stands: waiting (Left to go) or
// Ended.
type CanaryUpdate struct {
	Step  replay.CanaryStep
	Left  time.Duration
	Ended bool
}

// Plan is what a replay would do, for the confirm dialog.
type Plan struct {
	Messages int            // messages the replay would send
	Routes   []PlannedRoute // one per distinct destination
	// Unresolved counts messages whose origin cannot be told; they are not
	// sent unless a destination is typed.
	Unresolved int
	Warnings   []string
	// Resets counts, per retry counter, the messages whose copy would have
	// it reset (replay.Plan.Resets).
	Resets map[string]int
}

// PlannedRoute is one destination of a plan.
type PlannedRoute struct {
	Destination retrycore.Destination
	Source      string // how it was resolved: "x-original-exchange", "--to", …
	Messages    int
	// Queues is the route preview: every queue a copy would reach. Known is
	// false when the management API could not tell.
	Queues []string
	Known  bool
	// FailedQueues are the queues the messages failed in, when the headers
	// name them; a route reaching more than those means other services get
	// a copy too.
	FailedQueues []string
	// Problem says why the preview is missing or why the route is bad
	// ("exchange x does not exist").
	Problem string
	// CC are the CC/BCC routing keys the messages keep; CCQueues the
	// queues only those reach (also in Queues).
	CC, CCQueues []string
}

// Unroutable reports a route the preview knows reaches no queue.
func (r PlannedRoute) Unroutable() bool { return r.Known && len(r.Queues) == 0 }

// EditDraft is a message body waiting in a temporary file for $EDITOR.
type EditDraft struct {
	Queue       string
	ID          string
	Path        string // the body, mode 0600
	ContentType string
	// Opaque is the backend's own handle for FinishEdit.
	Opaque any
}

// Lots are the parking lots as the watch reads them.
type Lots struct {
	Snapshots []watch.Snapshot
	// LastHour are the messages published into each in the last hour
	// (watch.ArrivalsLastHour), by name; a parking lot not in it: the
	// broker does not count them.
	LastHour map[string]int64
}
