package format

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"

	"github.com/parkinglot/parkinglot/retrycore"
)

// Age is a short age for tables and status lines: "42s", "12m5s",
// "3h12m", "2d3h"; "-" when there is none.
func Age(d time.Duration) string {
	if d <= 0 {
		return "-"
	}
	d = d.Round(time.Second)
	switch {
	case d < time.Minute:
		return strconv.Itoa(int(d.Seconds())) + "s"
	case d < time.Hour:
		return fmt.Sprintf("%dm%ds", int(d.Minutes()), int(d.Seconds())%60)
	case d < 24*time.Hour:
		return fmt.Sprintf("%dh%dm", int(d.Hours()), int(d.Minutes())%60)
	}
	return fmt.Sprintf("%dd%dh", int(d.Hours())/24, int(d.Hours())%24)
}

// Time is a moment as people read it everywhere: RFC 3339 in UTC; "-"
// when there is none.
func Time(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}

// TimeAgo is Time followed by the age at now: "2026-12-02T16:11:19Z (8s ago)".
func TimeAgo(t, now time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return Time(t) + " (" + Age(now.Sub(t)) + " ago)"
}

// OneLine folds a text from a message onto one line: control characters
// removed, runs of white space made one space.
func OneLine(s string) string {
	return strings.Join(strings.Fields(retrycore.StripControl(s)), " ")
}

// Cut fits s into width terminal cells, ending with "…" when it was
// longer.
func Cut(s string, width int) string {
	if width <= 0 {
		return ""
	}
	if ansi.StringWidth(s) <= width {
		return s
	}
	return ansi.Truncate(s, width, "…")
}

// BodyKind is how a body is shown to people.
type BodyKind string

// The kinds of body.
const (
	BodyEmpty  BodyKind = "empty"
	BodyJSON   BodyKind = "JSON"
	BodyText   BodyKind = "text"
	BodyBinary BodyKind = "binary"
)

// ClassifyBody says how a body is shown when at most limit bytes of it
// fit (limit ≤ 0: all of it), and returns the part shown:
//   - JSON, indented, when all of it is shown, it is valid JSON and either
//     its content type says JSON or it is an object or an array;
//   - text when the part shown is UTF-8 (a rune cut at the end is dropped)
//     without NUL or ESC (an escape sequence would act on the reader's
//     terminal) and with at most 1 % other control characters;
//   - binary, a hex dump, otherwise.
func ClassifyBody(body []byte, contentType string, limit int) (BodyKind, []byte) {
	if len(body) == 0 {
		return BodyEmpty, body
	}
	shown := body
	cut := limit > 0 && len(body) > limit
	if cut {
		shown = trimPartialRune(body[:limit])
	}
	if !cut && json.Valid(body) && (IsJSONContentType(contentType) || looksLikeJSONDocument(body)) {
		return BodyJSON, body
	}
	if isText(shown) {
		return BodyText, shown
	}
	if cut {
		shown = body[:limit]
	}
	return BodyBinary, shown
}

// IsJSONContentType: application/json, text/json, application/x.y+json ….
func IsJSONContentType(ct string) bool {
	return strings.Contains(strings.ToLower(ct), "json")
}

func looksLikeJSONDocument(b []byte) bool {
	b = bytes.TrimLeft(b, " \t\r\n")
	return len(b) > 0 && (b[0] == '{' || b[0] == '[')
}

func isText(b []byte) bool {
	if !utf8.Valid(b) {
		return false
	}
	ctl := 0
	for _, c := range b {
		switch {
		case c == 0, c == 0x1b:
			return false
		case c < 0x20 && c != '\n' && c != '\r' && c != '\t', c == 0x7f:
			ctl++
		}
	}
	return ctl*100 <= len(b)
}

// trimPartialRune drops a rune cut in half at the end of a shortened body.
func trimPartialRune(b []byte) []byte {
	for i := 1; i <= utf8.UTFMax-1 && i <= len(b); i++ {
		if utf8.RuneStart(b[len(b)-i]) {
			if !utf8.FullRune(b[len(b)-i:]) {
				return b[:len(b)-i]
			}
			return b
		}
	}
	return b
}

// sparks are the eight heights of a sparkline.
var sparks = []rune("▁▂▃▄▅▆▇█")

// Sparkline draws the last width values as bars scaled from the smallest
// to the largest shown; a flat series is a flat line, nothing is "".
func Sparkline(values []int64, width int) string {
	if len(values) > width {
		values = values[len(values)-width:]
	}
	if len(values) == 0 || width <= 0 {
		return ""
	}
	lo, hi := values[0], values[0]
	for _, v := range values {
		lo, hi = min(lo, v), max(hi, v)
	}
	out := make([]rune, len(values))
	for i, v := range values {
		h := 0
		if hi > lo {
			h = int((v - lo) * int64(len(sparks)-1) / (hi - lo))
		}
		out[i] = sparks[h]
	}
	return string(out)
}
