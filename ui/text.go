package ui

import (
	"encoding/hex"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/parkinglot/parkinglot/replay"
	"github.com/parkinglot/parkinglot/retrycore"
)

// clean makes text from a message safe to draw: control characters (an
// ESC in an error text would reprogram the terminal) become visible
// escapes, invalid UTF-8 becomes U+FFFD, and newlines become "⏎".
func clean(s string) string {
	ok := true
	for i := 0; i < len(s); i++ {
		if b := s[i]; b < 0x20 || b == 0x7f || b >= 0x80 {
			ok = false
			break
		}
	}
	if ok {
		return s
	}
	var b strings.Builder
	for len(s) > 0 {
		r, size := utf8.DecodeRuneInString(s)
		s = s[size:]
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteRune('\uFFFD')
		case r == '\n':
			b.WriteString("⏎")
		case r == '\t':
			b.WriteString(" ")
		case unicode.IsControl(r):
			fmt.Fprintf(&b, "\\x%02x", r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// cut fits s into width cells, ending with "…" when it was longer.
func cut(s string, width int) string {
	if width <= 0 {
		return ""
	}
	if ansi.StringWidth(s) <= width {
		return s
	}
	return ansi.Truncate(s, width, "…")
}

// pad cuts or pads s to exactly width cells.
func pad(s string, width int) string {
	s = cut(s, width)
	if w := ansi.StringWidth(s); w < width {
		s += strings.Repeat(" ", width-w)
	}
	return s
}

// padLeft right-aligns s in width cells.
func padLeft(s string, width int) string {
	s = cut(s, width)
	if w := ansi.StringWidth(s); w < width {
		s = strings.Repeat(" ", width-w) + s
	}
	return s
}

// fmtAge is a short duration: 45s, 12m, 3h, 2h5m, 4d.
func fmtAge(d time.Duration) string {
	switch {
	case d <= 0:
		return "–"
	case d < time.Minute:
		return strconv.Itoa(int(d/time.Second)) + "s"
	case d < time.Hour:
		return strconv.Itoa(int(d/time.Minute)) + "m"
	case d < 24*time.Hour:
		h, m := int(d/time.Hour), int(d%time.Hour/time.Minute)
		if m == 0 || h >= 10 {
			return strconv.Itoa(h) + "h"
		}
		return strconv.Itoa(h) + "h" + strconv.Itoa(m) + "m"
	default:
		return strconv.Itoa(int(d/(24*time.Hour))) + "d"
	}
}

// fmtTime is a timestamp with its age.
func fmtTime(t, now time.Time) string {
	if t.IsZero() {
		return "–"
	}
	return t.UTC().Format("2006-01-02 15:04:05Z") + " (" + fmtAge(now.Sub(t)) + " ago)"
}

// destText is "exchange → routing key"; the default exchange is "(default)".
func destText(d retrycore.Destination) string {
	ex := d.Exchange
	if ex == "" {
		ex = "(default)"
	}
	return ex + " → " + d.RoutingKey
}

// originText is where a summary's message would be replayed to.
func originText(s replay.Summary) string {
	if s.Origin == nil {
		return "? unknown"
	}
	return clean(destText(s.Origin.Destination))
}

func fmtCount(n int64) string {
	switch {
	case n < 10000:
		return strconv.FormatInt(n, 10)
	case n < 1000000:
		return strconv.FormatFloat(float64(n)/1000, 'f', 1, 64) + "k"
	default:
		return strconv.FormatFloat(float64(n)/1e6, 'f', 1, 64) + "M"
	}
}

func fmtRate(r float64) string {
	if r <= 0 || math.IsNaN(r) || math.IsInf(r, 0) {
		return "–"
	}
	if r < 10 {
		return strconv.FormatFloat(r, 'f', 1, 64) + "/s"
	}
	return strconv.FormatFloat(r, 'f', 0, 64) + "/s"
}

// maxValueLen bounds one header value on screen; longer ones are cut.
const maxValueLen = 2048

// fmtValue renders a header value of any type amqp091-go decodes on one
// line, never panicking and never longer than maxValueLen.
func fmtValue(v any) string {
	var b strings.Builder
	writeValue(&b, v, 0)
	s := b.String()
	if len(s) > maxValueLen {
		s = s[:maxValueLen]
		for !utf8.ValidString(s) && len(s) > 0 {
			s = s[:len(s)-1]
		}
		s += "…"
	}
	return clean(s)
}

func writeValue(b *strings.Builder, v any, depth int) {
	if depth > 8 || b.Len() > maxValueLen {
		b.WriteString("…")
		return
	}
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case string:
		b.WriteString(x)
	case []byte:
		if utf8.Valid(x) {
			b.WriteString(string(x))
		} else {
			b.WriteString("0x" + hex.EncodeToString(x[:min(len(x), 256)]))
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
		b.WriteString(k + ": ")
		writeValue(b, t[k], depth+1)
	}
	b.WriteString("}")
}
