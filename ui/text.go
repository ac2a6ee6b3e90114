package ui

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"

	"github.com/parkinglot/parkinglot/replay"
	"github.com/parkinglot/parkinglot/ui/format"
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

// pad cuts or pads s to exactly width cells.
func pad(s string, width int) string {
	s = format.Cut(s, width)
	if w := ansi.StringWidth(s); w < width {
		s += strings.Repeat(" ", width-w)
	}
	return s
}

// padLeft right-aligns s in width cells.
func padLeft(s string, width int) string {
	s = format.Cut(s, width)
	if w := ansi.StringWidth(s); w < width {
		s = strings.Repeat(" ", width-w) + s
	}
	return s
}

// originText is where a summary's message would be replayed to.
func originText(s replay.Summary) string {
	if s.Origin == nil {
		return "? unknown"
	}
	return clean(format.Destination(s.Origin.Destination))
}

// fitCount is n in at most width characters: as it is when it fits, else
// in thousands or millions ("12k", "3M"), else the largest such that does
// with a "+" ("9k+"): a count never comes out cut ("10000…").
func fitCount(n int64, width int) string {
	s := strconv.FormatInt(n, 10)
	if len(s) <= width {
		return s
	}
	for _, u := range []struct {
		div    int64
		suffix string
	}{{1000, "k"}, {1000000, "M"}, {1000000000, "G"}} {
		if n/u.div == 0 {
			break
		}
		if s := strconv.FormatInt(n/u.div, 10) + u.suffix; len(s) <= width {
			return s
		}
	}
	if width < 2 {
		return "+"
	}
	return strings.Repeat("9", width-1) + "+"
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

// fmtValue renders a header value on one line by the rule `show` uses
// (format.Value), made safe to draw.
func fmtValue(v any) string { return clean(format.Value(v)) }
