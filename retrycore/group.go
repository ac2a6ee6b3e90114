package retrycore

import (
	"regexp"
	"strings"
)

// Placeholders are replaced in this order: quoted values first (they may hold
// anything), then UUIDs, hex ids, and numbers.
var groupRules = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`"[^"]*"`), `"…"`},
	{regexp.MustCompile(`'[^']*'`), `'…'`},
	{regexp.MustCompile(`(?i)\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b`), "<uuid>"},
	{regexp.MustCompile(`(?i)\b0x[0-9a-f]+\b`), "<hex>"},
	{regexp.MustCompile(`(?i)\b[0-9a-f]*[0-9][0-9a-f]*[a-f][0-9a-f]*\b|\b[0-9a-f]*[a-f][0-9a-f]*[0-9][0-9a-f]*\b`), "<hex>"},
	{regexp.MustCompile(`[-+]?\b\d+(\.\d+)?\b`), "<n>"},
}

// GroupKey normalises an error text so that failures differing only in ids,
// numbers or quoted values fall into one group: "transfer 123 not found" and
// "transfer 456 not found" both become "transfer <n> not found".
func GroupKey(text string) string {
	s := strings.TrimSpace(text)
	for _, r := range groupRules {
		s = r.re.ReplaceAllStringFunc(s, func(m string) string {
			if r.with == "<hex>" && len(m) < 8 && !strings.HasPrefix(strings.ToLower(m), "0x") {
				return m // short words like "face" or "a1" are not ids
			}
			return r.with
		})
	}
	return strings.Join(strings.Fields(s), " ")
}
