// Package format holds the text rules the CLI and the TUI share, so a
// header value or a destination reads the same in `show` and on screen.
package format

import (
	"encoding/hex"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/retrycore"
)

// Destination is "exchange → routing key"; the default exchange is
// "(default)". A name holding a control character or invalid UTF-8
// (from a header, or typed) is Go-quoted, so it cannot act on the
// terminal or split a line.
func Destination(d retrycore.Destination) string {
	ex := Name(d.Exchange)
	if d.Exchange == "" {
		ex = "(default)"
	}
	return ex + " → " + Name(d.RoutingKey)
}

// Name is an exchange, queue or routing key for people: as it is, or
// Go-quoted when it holds a control character or invalid UTF-8.
func Name(s string) string {
	if !utf8.ValidString(s) || strings.IndexFunc(s, unicode.IsControl) >= 0 {
		return strconv.Quote(s)
	}
	return s
}

// Limits of one rendered header value.
const (
	maxDepth   = 8   // nested tables and arrays shown
	maxItems   = 20  // array elements shown
	maxHexByte = 256 // bytes of a binary value shown as hex
	// MaxValueLen bounds one rendered value; longer ones end in "…".
	MaxValueLen = 2048
)

// Value renders a header value of any type amqp091-go decodes on one
// line, the same way at every depth:
//
//   - void is null; times are RFC 3339 in UTC; decimals are 1234e-2;
//   - strings, and byte arrays holding UTF-8, are Go-quoted ("timeout"), so
//     a control character or invalid UTF-8 shows as an escape and cannot act
//     on the terminal;
//   - other byte arrays are hex, 0x00ff…;
//   - tables are {key: value, …} in key order, arrays [a, b, …].
//
// It never panics and is never longer than MaxValueLen bytes plus "…".
func Value(v any) string {
	var b strings.Builder
	writeValue(&b, v, 0)
	s := b.String()
	if len(s) > MaxValueLen {
		s = s[:MaxValueLen]
		for !utf8.ValidString(s) && len(s) > 0 {
			s = s[:len(s)-1]
		}
		s += "…"
	}
	return s
}

func writeValue(b *strings.Builder, v any, depth int) {
	if depth > maxDepth || b.Len() > MaxValueLen {
		b.WriteString("…")
		return
	}
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case string:
		b.WriteString(strconv.Quote(x))
	case []byte:
		if utf8.Valid(x) {
			b.WriteString(strconv.Quote(string(x)))
			return
		}
		b.WriteString("0x" + hex.EncodeToString(x[:min(len(x), maxHexByte)]))
		if len(x) > maxHexByte {
			b.WriteString("…")
		}
	case time.Time:
		b.WriteString(x.UTC().Format(time.RFC3339))
	case amqp.Decimal:
		fmt.Fprintf(b, "%de-%d", x.Value, x.Scale)
	case amqp.Table:
		writeTable(b, x, depth)
	case map[string]any:
		writeTable(b, amqp.Table(x), depth)
	case []any:
		b.WriteString("[")
		for i, e := range x {
			if i > 0 {
				b.WriteString(", ")
			}
			if i >= maxItems {
				fmt.Fprintf(b, "… %d more", len(x)-i)
				break
			}
			writeValue(b, e, depth+1)
		}
		b.WriteString("]")
	default:
		fmt.Fprint(b, x)
	}
}

func writeTable(b *strings.Builder, t amqp.Table, depth int) {
	keys := make([]string, 0, len(t))
	for k := range t {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	b.WriteString("{")
	for i, k := range keys {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(Key(k) + ": ")
		writeValue(b, t[k], depth+1)
	}
	b.WriteString("}")
}

// Key is a header name made safe to print: control characters and invalid
// UTF-8 become escapes, as in a quoted string, without the quotes.
func Key(k string) string {
	q := strconv.Quote(k)
	if len(q) == len(k)+2 {
		return k
	}
	return q[1 : len(q)-1]
}

// What the broker's counters count (measured on each version by broker's
// versions tests), said beside them in `show` and the TUI: neither is
// attempts.
const (
	DeliveryCountMeaning = "failed deliveries on RabbitMQ 4.3; every give-back before, parkinglot's browses included"
	AcquiredCountMeaning = "every hand-out, including parkinglot's browses"
)

// Resets is the retry counters a replay resets (or would), each with
// its number of messages, most first: "x-death (3), x-retry-count (2)".
func Resets(resets map[string]int) string {
	names := make([]string, 0, len(resets))
	for k := range resets {
		names = append(names, k)
	}
	sort.Slice(names, func(i, j int) bool {
		if resets[names[i]] != resets[names[j]] {
			return resets[names[i]] > resets[names[j]]
		}
		return names[i] < names[j]
	})
	parts := make([]string, len(names))
	for i, k := range names {
		parts[i] = fmt.Sprintf("%s (%d)", strings.Join(strings.Fields(retrycore.StripControl(k)), " "), resets[k])
	}
	return strings.Join(parts, ", ")
}
