package retrycore

import (
	"regexp"
	"strings"
)

// Placeholders are replaced in this order: quoted values first (they may hold
// anything), then times, UUIDs, hex ids, and numbers. A rule with keep
// leaves the matches it refuses as they are.
var groupRules = []struct {
	re   *regexp.Regexp
	with string // a regexp template: ${1} is what the rule matched before the value
	keep func(match string) bool
}{
	{re: regexp.MustCompile(`"[^"]*"`), with: `"…"`},
	// An apostrophe after a letter is one ("can't"), not an opening quote.
	{re: regexp.MustCompile(`(^|[^\p{L}\d])'[^']*'`), with: `${1}'…'`},
	{re: regexp.MustCompile(`\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?`), with: "<time>"},
	{re: regexp.MustCompile(`(?i)\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b`), with: "<uuid>"},
	{re: regexp.MustCompile(`(?i)\b0x[0-9a-f]+\b`), with: "<hex>"},
	{re: regexp.MustCompile(`(?i)\b[0-9a-f]*[0-9][0-9a-f]*[a-f][0-9a-f]*\b|\b[0-9a-f]*[a-f][0-9a-f]*[0-9][0-9a-f]*\b`), with: "<hex>",
		keep: func(m string) bool { return len(m) < 8 }}, // short words like "a1" or "e5" are not ids
	// Numbers, also with a unit ("5000ms", "12.5s"), but not inside a word
	// ("utf8", "E1001" are names, not values).
	{re: regexp.MustCompile(`(^|[^\p{L}\d_])[-+]?\d+(?:\.\d+)?`), with: "${1}<n>"},
}

// GroupKey normalises an error text so that failures differing only in ids,
// numbers, times or quoted values fall into one group: "transfer 123 not
// found" and "transfer 456 not found" both become "transfer <n> not found".
func GroupKey(text string) string {
	s := strings.TrimSpace(text)
	for _, r := range groupRules {
		if r.keep == nil {
			s = r.re.ReplaceAllString(s, r.with)
			continue
		}
		s = r.re.ReplaceAllStringFunc(s, func(m string) string {
			if r.keep(m) {
				return m
			}
			return r.re.ReplaceAllString(m, r.with)
		})
	}
	return strings.Join(strings.Fields(s), " ")
}
