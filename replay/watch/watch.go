// Package watch reads parking lots for alerting: per parking lot its depth,
// the age of its oldest message (read from the head of the queue), the
// count of messages by normalised error group (top N and "other"), the
// arrivals the broker counts, and when each was last read. A Watcher reads
// the broker at most every interval and keeps the last values, so whoever
// asks for them (a Prometheus scrape, the TUI) never drives load on the
// broker.
//
// Every read is harmless in the sense of a browse (broker's package doc,
// "Browsing without harm"): no message is taken, reordered away or brought
// to a quorum delivery limit. Before RabbitMQ 4.3 a quorum give-back
// (basic.nack(requeue)) raises x-delivery-count: the scans read such lots
// too, at most once a scan interval, and a pass refreshes a message one
// give-back from a finite limit instead of giving it back (its re-publish
// is not counted as an arrival). Where the queue's type is unknown (no
// management API) the watch reads no message at all: the depth comes from
// the queue, the oldest age from when the watch first saw the depth grow
// (Snapshot.Source says which).
package watch

import (
	"time"
)

// The error_group values the watch adds to the groups' own.
const (
	// GroupOther sums every group past the top N.
	GroupOther = "other"
	// GroupNone is the group of messages that carry no error text.
	GroupNone = "none"
)

// AgeSource says where a Snapshot's oldest parked time comes from.
type AgeSource string

const (
	// AgeNone: the parking lot is empty, or nothing is known yet.
	AgeNone AgeSource = ""
	// AgeHeader: the head message's parked time, as the TUI shows it
	// (x-parked-at, a framework's failure time, the newest x-death time,
	// else the message's timestamp property).
	AgeHeader AgeSource = "header"
	// AgeFirstSeen: the head message carries none of those; the time the
	// watch first saw it at the head.
	AgeFirstSeen AgeSource = "first-seen"
	// AgeDepth: the watch reads no message of this queue (its type
	// unknown: it may be a quorum queue of unknown limit); the time the watch first saw the depth reach the messages
	// still there (first in, first out), or the watch's start for those
	// already there then.
	AgeDepth AgeSource = "depth"
)

// GroupCount is one error group and how many messages of the parking lot
// are in it.
type GroupCount struct {
	Group string `json:"group"` // retrycore.GroupKey of the error, GroupNone or GroupOther
	Count int64  `json:"count"`
	// OldestParkedAt is when the group's oldest message was parked (its
	// parked header, a framework's failure time, its death time); zero
	// for GroupOther and where none of its messages tells. It says from
	// the messages themselves whether an error is new to the parking lot,
	// which a restarted watch, or a group just grown out of GroupOther,
	// still knows.
	OldestParkedAt time.Time `json:"oldest_parked_at,omitzero"`
}

// Snapshot is what the watch last read of one parking lot.
type Snapshot struct {
	Vhost string `json:"vhost"`
	Queue string `json:"queue"`
	Type  string `json:"type,omitempty"` // classic | quorum ("" unknown)
	// Why the queue is watched: the queues listing's reason ("config",
	// "dead-letter target of …", "name") or "named" for a QUEUE argument.
	Why string `json:"why,omitempty"`
	// Found is false for a queue named on the command line (or the
	// daemon's parking lot) that does not exist (yet).
	Found bool `json:"found"`

	Depth int64 `json:"depth"`
	// OldestParkedAt is when the oldest message (the head) was parked;
	// zero when the parking lot is empty or it is not known yet.
	OldestParkedAt time.Time `json:"oldest_parked_at,omitzero"`
	// OldestFromHeader: OldestParkedAt is the message's own parked time
	// (Source AgeHeader), not the watch's first sight.
	OldestFromHeader bool      `json:"oldest_from_header"`
	Source           AgeSource `json:"oldest_source,omitempty"`
	// OldestID is the head message's id, when the watch read it.
	OldestID string `json:"oldest_id,omitempty"`
	// ReadsMessages is false where the watch reads no message at all
	// (a queue of unknown type): no head, no groups.
	ReadsMessages bool `json:"reads_messages"`

	// Arrivals is the broker's count of messages published into the
	// queue (management statistics, message_stats.publish), when
	// ArrivalsKnown.
	Arrivals      int64 `json:"arrivals"`
	ArrivalsKnown bool  `json:"arrivals_known"`
	// Republished counts the messages the watch's own scans re-published
	// into the queue since it started (refreshed one give-back from a
	// delivery limit, quorum before 4.3): not in Arrivals.
	Republished    int64     `json:"republished"`
	republishedLog []arrival // the last hour's, by time

	// TopGroups are the largest error groups of the last scan, largest
	// first, then GroupOther when more groups were seen; nil before the
	// first scan.
	TopGroups []GroupCount `json:"top_groups,omitempty"`
	Scanned   int64        `json:"scanned"` // messages the last scan saw

	// LastRead is the last successful read of depth and head; LastScan
	// the last group scan (zero: none yet).
	LastRead time.Time `json:"last_read,omitzero"`
	LastScan time.Time `json:"last_scan,omitzero"`
	// DeliveryLimit is a quorum parking lot's effective delivery limit
	// (-1: unlimited, as every classic queue), when LimitKnown (from the
	// management API). A finite one drops a message that lost connections
	// of whoever holds it count past it.
	DeliveryLimit int64 `json:"delivery_limit"`
	LimitKnown    bool  `json:"delivery_limit_known"`
	// Err is the last read's error, when it failed (the values above are
	// the last good ones).
	Err string `json:"error,omitempty"`
}

// OldestAge is how long the oldest message has been parked, as of now: 0
// when the parking lot is empty or its oldest time is not known.
func (s Snapshot) OldestAge(now time.Time) time.Duration {
	if s.Depth == 0 || s.OldestParkedAt.IsZero() {
		return 0
	}
	if d := now.Sub(s.OldestParkedAt); d > 0 {
		return d
	}
	return 0
}

// TopGroup is the largest error group (not GroupOther), "" before a scan.
func (s Snapshot) TopGroup() GroupCount {
	for _, g := range s.TopGroups {
		if g.Group != GroupOther {
			return g
		}
	}
	return GroupCount{}
}

// ErrorKind labels parkinglot_watch_errors_total.
type ErrorKind string

// The kinds of errors the watch counts.
const (
	ErrConnect  ErrorKind = "connect"
	ErrDepth    ErrorKind = "depth"
	ErrHead     ErrorKind = "head"
	ErrScan     ErrorKind = "scan"
	ErrDiscover ErrorKind = "discover"
)

// ErrorKinds are every ErrorKind, for a counter that shows each from 0.
var ErrorKinds = []ErrorKind{ErrConnect, ErrDepth, ErrHead, ErrScan, ErrDiscover}

// Health is the watch's own state.
type Health struct {
	// Ready: connected to every vhost watched, and every queue named was
	// found.
	Ready bool `json:"ready"`
	// Why says what keeps it from being ready ("" when ready).
	Why    string              `json:"why,omitempty"`
	Errors map[ErrorKind]int64 `json:"errors"`
}
