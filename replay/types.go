package replay

import (
	"errors"
	"strconv"
	"time"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/broker/store"
	"github.com/parkinglot/parkinglot/retrycore"
)

// Summary is one parked message as lists and the TUI show it: decoded
// through retrycore, never by reading headers directly.
type Summary struct {
	Index       int    `json:"-"` // position in the browse spool, when spooled
	ID          string `json:"id"`
	Exchange    string `json:"exchange"`
	RoutingKey  string `json:"routing_key"`
	ContentType string `json:"content_type,omitempty"`
	BodySize    int    `json:"body_size"`
	Redelivered bool   `json:"redelivered,omitempty"`

	Facts retrycore.Facts `json:"facts"`
	// Origin is where a replay would send the message by default; nil with
	// OriginErr set when it cannot be told.
	Origin    *retrycore.Origin `json:"origin,omitempty"`
	OriginErr string            `json:"origin_error,omitempty"`
	originErr error             // OriginErr's error, when decoded in this process
	// Group is the normalised error text (retrycore.GroupKey) for grouping.
	Group string `json:"group"`
	// ParkedAt is when the message was parked (x-parked-at, a framework's
	// timestamp, the newest death time or the message timestamp).
	ParkedAt time.Time `json:"parked_at,omitzero"`
}

// Age is how long the message has been parked, as of now.
func (s Summary) Age(now time.Time) time.Duration {
	if s.ParkedAt.IsZero() {
		return 0
	}
	return now.Sub(s.ParkedAt)
}

// Selector chooses the messages a command acts on. Exactly one of IDs (or
// Chosen), All and Filter is set (Filter may combine with IDs: both must
// match).
type Selector struct {
	IDs []string
	// Chosen is a selection by id too, built by the caller and kept
	// compact (the TUI's selection of many rows); the caller closes it.
	Chosen *store.IDSet
	All    bool
	Filter string // an expr-lang expression over the message (see filter.go)
}

// Target says where replayed messages go.
type Target string

const (
	// TargetOrigin sends to the resolved origin (retrycore's resolution rules) — the default.
	TargetOrigin Target = "origin"
	// TargetQueue sends to the queue that failed alone: the default exchange
	// with the queue name as routing key.
	TargetQueue Target = "queue"
)

// EventKind says what a progress event reports.
type EventKind string

const (
	EventPlanned   EventKind = "planned"  // a message was chosen; Total may grow
	EventReplayed  EventKind = "replayed" // the routed copy was confirmed and the parked one acked
	EventDeleted   EventKind = "deleted"  // removed from the parking lot
	EventExported  EventKind = "exported" // written to the export file
	EventImported  EventKind = "imported" // published from the file, confirmed
	EventFailed    EventKind = "failed"   // not done; the message stays where it was
	EventSkipped   EventKind = "skipped"  // e.g. already sent in this run (loop guard)
	EventDryRun    EventKind = "dry-run"  // would be sent to Destination
	EventFinished  EventKind = "finished" // the run is over
	EventNote      EventKind = "note"     // something the user should know (Note or Route)
	EventRateLimit EventKind = "rate"     // waiting for the rate limiter
)

// Event is one step of a run, for progress bars and per-message reports.
type Event struct {
	Kind        EventKind              `json:"event"`
	ID          string                 `json:"id,omitempty"`
	Destination *retrycore.Destination `json:"destination,omitempty"`
	ReplayID    string                 `json:"replay_id,omitempty"`
	Err         string                 `json:"error,omitempty"`
	Code        FailureCode            `json:"code,omitempty"`
	Text        string                 `json:"text,omitempty"`
	// Route is the route a dry-run message would take, and the route a
	// note warns of (Text empty: the caller words it, ui/format).
	Route *RoutePreview `json:"-"`
	// Note is what a note tells (Text empty: the caller words it,
	// ui/format).
	Note *Note `json:"-"`
	// Resets are the retry counters the copy reset (replayed, dry-run).
	Resets []string `json:"resets,omitempty"`
	Done   int      `json:"done"`  // messages finished so far (done or failed)
	Total  int      `json:"total"` // messages chosen so far
}

// Result is the outcome of a run.
type Result struct {
	Done    int `json:"done"`
	Failed  int `json:"failed"`
	Skipped int `json:"skipped"`
	// NotSent counts the messages chosen but never sent, because the run
	// stopped first (interrupted, or halted): nothing happened to them
	// (still parked; an import's lines not imported), so they are neither
	// failed nor in the audit log.
	NotSent int `json:"not_sent,omitempty"`
	// Failures lists the first MaxListedFailures messages that were not
	// done, with the reason; Failed counts them all, and each was reported
	// as it happened (EventFailed).
	Failures []Failure `json:"failures,omitempty"`
	// mixedReasons: not every failure had the same reason (tally), also
	// among those not listed.
	mixedReasons bool
	// notFound: of Failed, the requested ids no pass found (a canary step
	// that found none of its messages tested nothing, and failed nothing).
	notFound int
	// sent: the new messages the run sent (its limit counts them).
	sent int
	// Resets counts, per retry counter, the copies sent with it reset
	// (a fresh retry budget in every convention: Transform).
	Resets map[string]int    `json:"resets,omitempty"`
	Pass   broker.PassReport `json:"pass"`
	// Notes are things the user should know (a reconnect, a note of the
	// browse pass about quorum delivery limits); ui/format words them and
	// ui/cli puts them in -o json.
	Notes []Note `json:"-"`
	// Routes are a dry run's routes that warn (RoutePreview.Warns), told
	// before the Notes once worded (ui/format.RouteWarning).
	Routes []RoutePreview `json:"-"`
	// Run is a replay's run id (Options.Run), for RunStatus.
	Run string `json:"run,omitempty"`
}

// MaxListedFailures is how many failures a Result lists, and a plan's
// refusals PlanEach keeps, by id: a run over a parking lot of any size
// counts the rest, so its memory does not grow with the failures: a
// downstream outage can park every message a service receives.
const MaxListedFailures = 100

// Failure is one message that was not done.
type Failure struct {
	ID  string `json:"id"`
	Err string `json:"error"`
	// Code names the reasons a person can mend (CodeUnknownOrigin,
	// CodeFailedQueueUnknown); empty for the others.
	Code FailureCode `json:"code,omitempty"`
}

// FailureCode is a stable name for a kind of failure, for callers that
// decide by it (the CLI's hints, scripts reading -o json).
type FailureCode string

// The failure codes.
const (
	CodeUnknownOrigin      FailureCode = "unknown_origin"
	CodeFailedQueueUnknown FailureCode = "failed_queue_unknown"
)

// failureCode is the code of err, by its type.
func failureCode(err error) FailureCode {
	switch {
	case errors.Is(err, retrycore.ErrUnknownOrigin):
		return CodeUnknownOrigin
	case errors.Is(err, ErrFailedQueueUnknown):
		return CodeFailedQueueUnknown
	}
	return ""
}

// Err returns ErrNotAllDone (wrapped with the count) when some messages
// failed, so the CLI exits 3.
func (r Result) Err() error {
	if r.Failed == 0 {
		return nil
	}
	e := &NotAllDoneError{Failed: r.Failed, Done: r.Done}
	// The reason on the error line too, so that a log that keeps only
	// stderr says why: the one reason, or the first of several.
	if len(r.Failures) > 0 {
		e.Reason = r.Failures[0].Err
		e.Mixed = r.mixedReasons
		for _, f := range r.Failures[1:] {
			if f.Err != e.Reason {
				e.Mixed = true
				break
			}
		}
	}
	return e
}

// NotAllDoneError ends a run that did some messages (Done) and not others
// (Failed); Reason is the first failure's reason, Mixed says the others
// differ. It is ErrNotAllDone to errors.Is.
type NotAllDoneError struct {
	Failed, Done int
	Reason       string
	Mixed        bool
}

func (e *NotAllDoneError) Error() string {
	s := strconv.Itoa(e.Failed) + " message(s) not done, " + strconv.Itoa(e.Done) + " done"
	switch {
	case e.Reason == "":
	case e.Mixed:
		s += "; the first: " + e.Reason
	default:
		s += ": " + e.Reason
	}
	return s
}

func (e *NotAllDoneError) Unwrap() error { return ErrNotAllDone }
