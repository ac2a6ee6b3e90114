package retrycore

import (
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/broker"
)

// The header contract (see the package doc). The daemon writes the first
// group when it retries or parks; replay writes the second; everything
// reads them.
const (
	HeaderRetryCount         = "x-retry-count"
	HeaderLastError          = "x-last-error"
	HeaderOriginalExchange   = "x-original-exchange"
	HeaderOriginalRoutingKey = "x-original-routing-key"
	// HeaderOriginalQueue is an addition to the contract: the main queue the
	// message failed in, so replay can target that queue alone.
	HeaderOriginalQueue = "x-original-queue"
	// HeaderOriginalDeliveryMode is an addition to the contract too: the
	// delivery mode the producer sent (its AMQP number, int32; 0 when it
	// set none), written only when that was not persistent, since every
	// retry and park copy is persistent ([CopyDeliveryMode]). A replay
	// gives it back to the copy it sends ([RestoreDeliveryMode]).
	HeaderOriginalDeliveryMode = "x-original-delivery-mode"
	HeaderFirstFailedAt        = "x-first-failed-at"
	HeaderParkedAt             = "x-parked-at"
	HeaderFailureKind          = "x-failure-kind"

	HeaderReplayCount = "x-replay-count"
	HeaderReplayedAt  = "x-replayed-at"
	HeaderReplayID    = "x-replay-id"
	// HeaderReplayedError is an addition to the contract: the error the
	// message was parked with when it was replayed (one line), so that a
	// copy that comes back can be told to fail the same way or another.
	HeaderReplayedError = "x-replayed-error"
	// HeaderReplayRun is an addition to the contract too: the replay run
	// that sent the copy (the audit log's run); every copy of one run
	// carries the same.
	HeaderReplayRun = "x-replay-run"

	// Written by RabbitMQ.
	HeaderDeath              = "x-death"
	HeaderFirstDeathQueue    = "x-first-death-queue"
	HeaderFirstDeathReason   = "x-first-death-reason"
	HeaderFirstDeathExchange = "x-first-death-exchange"
	HeaderLastDeathQueue     = "x-last-death-queue"
	HeaderLastDeathReason    = "x-last-death-reason"
	HeaderLastDeathExchange  = "x-last-death-exchange"
	HeaderDeliveryCount      = "x-delivery-count"
	// HeaderAcquiredCount is added by RabbitMQ 4.3 quorum queues: every
	// hand-out to a consumer, while x-delivery-count counts failed
	// deliveries only.
	HeaderAcquiredCount = "x-acquired-count"
)

// Failure kinds written to x-failure-kind.
const (
	KindPermanent        = "permanent"
	KindRetriesExhausted = "retries-exhausted"
)

// MaxErrorLen bounds x-last-error: a whole header block must fit in one
// frame (128 KiB by default), and one line is what people read.
const MaxErrorLen = 1024

// OneLine reduces an error text to one line of at most MaxErrorLen bytes,
// cut on a rune boundary.
func OneLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		s = strings.TrimSpace(s[:i])
	}
	s = StripControl(strings.ToValidUTF8(s, "\uFFFD"))
	if len(s) <= MaxErrorLen {
		return s
	}
	cut := MaxErrorLen - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// ansiEscape matches terminal escape sequences: CSI (colours, cursor
// moves), OSC (titles, hyperlinks) and the two-byte ones.
var ansiEscape = regexp.MustCompile("\x1b(?:\\[[0-?]*[ -/]*[@-~]|\\][^\x07\x1b]*(?:\x07|\x1b\\\\)?|[@-Z\\\\-_])")

// StripControl removes terminal escape sequences and control characters
// (a tab becomes a space; newlines are kept) from text a handler or another
// producer wrote, so that showing it cannot colour, move or retitle the
// reader's terminal.
func StripControl(s string) string {
	clean := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < 0x20 && c != '\n') || c == 0x7f || c == 0xc2 { // 0xc2 leads the C1 controls
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	if strings.IndexByte(s, 0x1b) >= 0 {
		s = ansiEscape.ReplaceAllString(s, "")
	}
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\t':
			return ' '
		case r == '\n':
			return r
		case unicode.IsControl(r):
			return -1
		}
		return r
	}, s)
}

// asInt reads any integer type amqp091-go decodes (and decimal strings,
// which some bridges write), reporting false for anything else.
func asInt(v any) (int64, bool) {
	if i, ok := broker.IntValue(v); ok {
		return i, true
	}
	switch n := v.(type) {
	case uint64:
		if n > 1<<62 {
			return 0, false
		}
		return int64(n), true
	case float64:
		if n == float64(int64(n)) {
			return int64(n), true
		}
	case float32:
		if n == float32(int64(n)) {
			return int64(n), true
		}
	case string:
		i, err := strconv.ParseInt(strings.TrimSpace(n), 10, 64)
		return i, err == nil
	}
	return 0, false
}

// asString reads a string or byte-array header.
func asString(v any) (string, bool) { return broker.StringValue(v) }

// asTime reads a timestamp header: an AMQP timestamp, RFC 3339 text, or
// Unix seconds/milliseconds as an integer.
func asTime(v any) (time.Time, bool) {
	switch t := v.(type) {
	case time.Time:
		return t, !t.IsZero()
	case string:
		s := strings.TrimSpace(t)
		// NServiceBus writes "yyyy-MM-dd HH:mm:ss:ffffff Z": a colon before
		// the fraction, which Go layouts cannot say.
		if len(s) == len("2006-01-02 15:04:05:000000 Z") && s[19] == ':' {
			s = s[:19] + "." + s[20:]
		}
		for _, layout := range []string{time.RFC3339Nano, "2006-01-02 15:04:05Z", "2006-01-02 15:04:05.000000 Z"} {
			if ts, err := time.Parse(layout, s); err == nil {
				return ts, true
			}
		}
		return time.Time{}, false
	}
	if n, ok := asInt(v); ok && n > 0 {
		if n > 1e12 { // milliseconds
			return time.UnixMilli(n), true
		}
		return time.Unix(n, 0), true
	}
	return time.Time{}, false
}

func headerString(h amqp.Table, key string) string {
	s, _ := asString(h[key])
	return s
}
