package retrycore

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Placeholders are replaced in this order: quoted values first (they may hold
// anything), then times, UUIDs, 0x hex, hex ids and numbers (the last two by
// scanning, in GroupKey). A rule runs only when need says the text holds
// what every match of it holds: the regular expressions cost microseconds
// each even when nothing matches, and a browse groups every message of a
// 100k parking lot.
var groupRules = []struct {
	re   *regexp.Regexp
	with string // a regexp template: ${1} is what the rule matched before the value
	need func(s string) bool
}{
	{re: regexp.MustCompile(`"[^"]*"`), with: `"…"`, need: func(s string) bool { return strings.Count(s, `"`) >= 2 }},
	// An apostrophe after a letter is one ("can't"), not an opening quote.
	{re: regexp.MustCompile(`(^|[^\p{L}\d])'[^']*'`), with: `${1}'…'`, need: func(s string) bool { return strings.Count(s, "'") >= 2 }},
	{re: regexp.MustCompile(`\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?`), with: "<time>",
		need: func(s string) bool { return strings.IndexByte(s, ':') >= 0 && strings.IndexByte(s, '-') >= 0 }},
	{re: regexp.MustCompile(`(?i)\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b`), with: "<uuid>",
		need: func(s string) bool { return strings.Count(s, "-") >= 4 }},
	{re: regexp.MustCompile(`(?i)\b0x[0-9a-f]+\b`), with: "<hex>",
		need: func(s string) bool { return strings.Contains(s, "0x") || strings.Contains(s, "0X") }},
}

// GroupKey normalises an error text so that failures differing only in ids,
// numbers, times or quoted values fall into one group: "transfer 123 not
// found" and "transfer 456 not found" both become "transfer <n> not found".
// After the rules above, hex ids (replaceHexWords) and numbers
// (replaceNumbers) are replaced by scanning: as regular expressions they
// were most of the cost (GroupKey went from 5.3 µs to 0.6 µs a text on
// group_ref_test.go's corpus, which checks that the keys are the same).
func GroupKey(text string) string {
	// A key is a metric label and a JSON key: valid UTF-8 whatever the
	// header held.
	s := strings.TrimSpace(strings.ToValidUTF8(text, "\uFFFD"))
	for _, r := range groupRules {
		if r.need(s) {
			s = r.re.ReplaceAllString(s, r.with)
		}
	}
	s = replaceHexWords(s)
	s = replaceNumbers(s)
	return strings.Join(strings.Fields(s), " ")
}

// isWordByte is regexp's \b notion of a word character (ASCII letters,
// digits and _); a byte of a multi-byte rune never is one.
func isWordByte(c byte) bool {
	return c == '_' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

func isHexLetter(c byte) bool { return 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// replaceHexWords replaces each word (a maximal run of word characters)
// made only of hex digits, holding both a digit and a letter, and at least
// 8 long, with "<hex>" ("507f1f77bcf86cd799439011" is an id; "a1", "e5",
// "cafe" and "face" are words). It is the rule
// (?i)\b[0-9a-f]*[0-9][0-9a-f]*[a-f][0-9a-f]*\b|\b[0-9a-f]*[a-f][0-9a-f]*[0-9][0-9a-f]*\b
// with matches shorter than 8 kept.
func replaceHexWords(s string) string {
	var b strings.Builder
	last := 0
	for i := 0; i < len(s); {
		if !isWordByte(s[i]) {
			i++
			continue
		}
		j := i
		digit, letter, hex := false, false, true
		for ; j < len(s) && isWordByte(s[j]); j++ {
			switch c := s[j]; {
			case isDigit(c):
				digit = true
			case isHexLetter(c):
				letter = true
			default:
				hex = false
			}
		}
		if hex && digit && letter && j-i >= 8 {
			if b.Len() == 0 {
				b.Grow(len(s))
			}
			b.WriteString(s[last:i])
			b.WriteString("<hex>")
			last = j
		}
		i = j
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// replaceNumbers replaces numbers, also with a unit ("5000ms", "12.5s"),
// but not inside a word ("utf8", "E1001" are names, not values), with
// "<n>". It is the rule (^|[^\p{L}\d_])[-+]?\d+(?:\.\d+)? → ${1}<n>,
// scanned the way regexp finds leftmost-first, non-overlapping matches.
func replaceNumbers(s string) string {
	var b strings.Builder
	last := 0
	// number returns the end of [-+]?\d+(?:\.\d+)? at i, or -1.
	number := func(i int) int {
		if i < len(s) && (s[i] == '-' || s[i] == '+') {
			i++
		}
		j := i
		for j < len(s) && isDigit(s[j]) {
			j++
		}
		if j == i {
			return -1
		}
		if j+1 < len(s) && s[j] == '.' && isDigit(s[j+1]) {
			j += 2
			for j < len(s) && isDigit(s[j]) {
				j++
			}
		}
		return j
	}
	for p := 0; p < len(s); {
		start, end := -1, -1
		if p == 0 {
			if e := number(0); e > 0 {
				start, end = 0, e // (^) wins over a prefix character
			}
		}
		r, w := utf8.DecodeRuneInString(s[p:])
		if start < 0 && r != '_' && !isDigit(s[p]) && !unicode.IsLetter(r) {
			if e := number(p + w); e > 0 {
				start, end = p+w, e // the prefix character stays
			}
		}
		if start < 0 {
			p += w
			continue
		}
		if b.Len() == 0 {
			b.Grow(len(s))
		}
		b.WriteString(s[last:start])
		b.WriteString("<n>")
		last, p = end, end
	}
	if last == 0 && b.Len() == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}
