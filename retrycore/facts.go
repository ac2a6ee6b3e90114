package retrycore

import (
	"context"
	"strings"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// Facts is everything the header conventions say about one message: ours,
// RabbitMQ's, and those of the frameworks parkinglot reads.
type Facts struct {
	Deaths     []Death  `json:"deaths,omitempty"`
	FirstDeath DeathRef `json:"first_death,omitzero"`
	LastDeath  DeathRef `json:"last_death,omitzero"`
	// DeliveryCount is a quorum queue's x-delivery-count: failed deliveries
	// on RabbitMQ 4.3, every give-back before. AcquiredCount is 4.3's
	// x-acquired-count: every hand-out, browses included. nil when the
	// message does not carry the header.
	DeliveryCount *int64 `json:"delivery_count,omitempty"`
	AcquiredCount *int64 `json:"acquired_count,omitempty"`

	// Attempts is how many times a handler saw the message, the failure
	// that parked it included (the rule per convention is in attempts).
	// AttemptsSource is parkinglot's own label saying how the number was
	// derived, never a header's name alone.
	Attempts       int64  `json:"attempts"`
	AttemptsSource string `json:"attempts_source,omitempty"`

	Error       string `json:"error,omitempty"`        // one line
	ErrorSource string `json:"error_source,omitempty"` // the header it came from
	ErrorType   string `json:"error_type,omitempty"`
	StackTrace  string `json:"stack_trace,omitempty"`
	FailureKind string `json:"failure_kind,omitempty"`

	FirstFailedAt time.Time `json:"first_failed_at,omitzero"`
	ParkedAt      time.Time `json:"parked_at,omitzero"` // x-parked-at, or the newest death time

	ReplayCount int64     `json:"replay_count,omitempty"`
	ReplayedAt  time.Time `json:"replayed_at,omitzero"`
	ReplayID    string    `json:"replay_id,omitempty"`
	// CameBack: the parked message carries a replay id: it was replayed
	// and came back to a parking lot (what a canary replay watches for).
	// ReplayedError is the error it had when it was replayed
	// (x-replayed-error); SameError says whether the error it came back
	// with is in the same group (GroupKey) as that one, nil when the
	// replay did not record it.
	CameBack      bool   `json:"came_back,omitempty"`
	ReplayRun     string `json:"replay_run,omitempty"` // x-replay-run
	ReplayedError string `json:"replayed_error,omitempty"`
	SameError     *bool  `json:"same_error,omitempty"`

	// Problems lists headers of an unexpected shape that decoding passed over.
	Problems []string `json:"problems,omitempty"`
}

// errorHeaders are read in order; the first non-empty one is the error.
var errorHeaders = []string{
	HeaderLastError,
	"x-exception-message",               // Spring AMQP
	"MT-Fault-Message",                  // MassTransit
	"NServiceBus.ExceptionInfo.Message", // NServiceBus
	"rbs2-error-details",                // Rebus
	"MT-Reason",
}

var errorTypeHeaders = []string{"MT-Fault-ExceptionType", "NServiceBus.ExceptionInfo.ExceptionType", "x-exception-fqcn"}

var stackHeaders = []string{"x-exception-stacktrace", "MT-Fault-StackTrace", "NServiceBus.ExceptionInfo.StackTrace"}

// Decode reads the facts from a message's headers. It never fails and
// never panics, whatever the headers hold. A message dead-lettered by a
// quorum queue's delivery limit gets a lower bound for its attempts; use
// DecodeWith to look the limit up.
func Decode(h amqp.Table) Facts {
	return DecodeWith(context.Background(), h, nil)
}

// DecodeWith is Decode, with the delivery limits of the queues a message
// was dead-lettered from by reason delivery_limit looked up through limits
// (nil: not looked up), so its attempts are exact.
func DecodeWith(ctx context.Context, h amqp.Table, limits DeliveryLimits) Facts {
	var f Facts
	f.Deaths, f.Problems = Deaths(h)
	f.FirstDeath = firstDeath(h, f.Deaths)
	f.LastDeath = deathRef(h, HeaderLastDeathQueue, HeaderLastDeathReason, HeaderLastDeathExchange)
	if n, ok := asInt(h[HeaderDeliveryCount]); ok {
		f.DeliveryCount = &n
	}
	if n, ok := asInt(h[HeaderAcquiredCount]); ok {
		f.AcquiredCount = &n
	}

	f.Attempts, f.AttemptsSource = attempts(ctx, h, f.Deaths, f.FirstDeath, limits)

	for _, k := range errorHeaders {
		if s, ok := asString(h[k]); ok && strings.TrimSpace(s) != "" {
			f.Error, f.ErrorSource = OneLine(s), k
			break
		}
		if k == "x-exception-message" { // rascal's nested error, after Spring's
			if s, ok := asString(rascalValue(h, "error", "message")); ok && strings.TrimSpace(s) != "" {
				f.Error, f.ErrorSource = OneLine(s), SourceRascalError
				break
			}
		}
	}
	if f.Error == "" && len(f.Deaths) > 0 {
		d := f.Deaths[0]
		f.Error, f.ErrorSource = OneLine("dead-lettered: "+d.Reason+" in "+d.Queue), HeaderDeath // x-death's strings are any bytes too
	}
	for _, k := range errorTypeHeaders {
		if s, ok := asString(h[k]); ok && s != "" {
			f.ErrorType = OneLine(s)
			break
		}
	}
	if f.ErrorType == "" {
		if s, ok := asString(rascalValue(h, "error", "code")); ok && s != "" {
			f.ErrorType = OneLine(s)
		}
	}
	for _, k := range stackHeaders {
		if s, ok := asString(h[k]); ok && s != "" {
			f.StackTrace = s
			break
		}
	}
	f.FailureKind = headerString(h, HeaderFailureKind)

	f.FirstFailedAt, _ = asTime(h[HeaderFirstFailedAt])
	if t, ok := asTime(h[HeaderParkedAt]); ok {
		f.ParkedAt = t
	} else if t, ok := asTime(h["MT-Fault-Timestamp"]); ok {
		f.ParkedAt = t
	} else if t, ok := asTime(h["NServiceBus.TimeOfFailure"]); ok {
		f.ParkedAt = t
	} else if len(f.Deaths) > 0 {
		f.ParkedAt = f.Deaths[0].Time
	}
	if n, ok := asInt(h[HeaderReplayCount]); ok {
		f.ReplayCount = n
	}
	f.ReplayedAt, _ = asTime(h[HeaderReplayedAt])
	f.ReplayID = headerString(h, HeaderReplayID)
	f.CameBack = f.ReplayID != ""
	f.ReplayRun = headerString(h, HeaderReplayRun)
	if s, ok := asString(h[HeaderReplayedError]); ok && strings.TrimSpace(s) != "" {
		f.ReplayedError = OneLine(s)
		if f.CameBack {
			same := GroupKey(f.Error) == GroupKey(f.ReplayedError)
			f.SameError = &same
		}
	}
	return f
}

// RetriesDone is the daemon's count of retries done so far, which decides
// between another retry and the parking lot (Classify): x-retry-count, or
// for retry-by-nack topologies the rejected count of the main queue. It is
// not the number of handler runs shown to people; that is Facts.Attempts.
func RetriesDone(h amqp.Table) int64 {
	if n, ok := asInt(h[HeaderRetryCount]); ok && n >= 0 {
		return n // the common case needs no death decoding
	}
	deaths, _ := Deaths(h)
	first := firstDeath(h, deaths)
	if first.Queue != "" {
		if d, ok := findDeath(deaths, first.Queue, "rejected"); ok {
			return d.Count
		}
	}
	var best int64
	for _, d := range deaths {
		if d.Reason == "rejected" && d.Count > best {
			best = d.Count
		}
	}
	return best
}

// AttemptsOf returns Decode(h).Attempts, the handler runs of a parked
// message (see attempts), without the delivery limit of a quorum queue
// (DecodeWith looks that up).
func AttemptsOf(h amqp.Table) int64 {
	deaths, _ := Deaths(h)
	n, _ := attempts(context.Background(), h, deaths, firstDeath(h, deaths), nil)
	return n
}

// firstDeath reads x-first-death-*, falling back to the oldest x-death entry
// (brokers before 3.8 and hand-made headers have no x-first-death-*).
func firstDeath(h amqp.Table, deaths []Death) DeathRef {
	ref := deathRef(h, HeaderFirstDeathQueue, HeaderFirstDeathReason, HeaderFirstDeathExchange)
	if ref.empty() && len(deaths) > 0 {
		d := deaths[len(deaths)-1]
		ref = DeathRef{Queue: d.Queue, Reason: d.Reason, Exchange: d.Exchange}
	}
	return ref
}
