package retrycore

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
)

// regexpGroupKey returns GroupKey as it was before its hex and number
// rules became scanners (and its other rules got guards): seven regular
// expressions applied in order. GroupKey must give the same key for every
// text.
func regexpGroupKey() func(text string) string {
	rules := []struct {
		re   *regexp.Regexp
		with string
		keep func(string) bool
	}{
		{re: regexp.MustCompile(`"[^"]*"`), with: `"…"`},
		{re: regexp.MustCompile(`(^|[^\p{L}\d])'[^']*'`), with: `${1}'…'`},
		{re: regexp.MustCompile(`\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?`), with: "<time>"},
		{re: regexp.MustCompile(`(?i)\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b`), with: "<uuid>"},
		{re: regexp.MustCompile(`(?i)\b0x[0-9a-f]+\b`), with: "<hex>"},
		{re: regexp.MustCompile(`(?i)\b[0-9a-f]*[0-9][0-9a-f]*[a-f][0-9a-f]*\b|\b[0-9a-f]*[a-f][0-9a-f]*[0-9][0-9a-f]*\b`), with: "<hex>",
			keep: func(m string) bool { return len(m) < 8 }},
		{re: regexp.MustCompile(`(^|[^\p{L}\d_])[-+]?\d+(?:\.\d+)?`), with: "${1}<n>"},
	}
	return func(text string) string {
		s := strings.TrimSpace(strings.ToValidUTF8(text, "\uFFFD"))
		for _, r := range rules {
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
}

// groupKeyCorpus is texts that probe the edges of every rule.
func groupKeyCorpus() []string {
	return []string{
		"", " ", "transfer 123 not found", "-5-3", "x--5", "a-5", "1.2.3", "1..2", "1.", ".5", "+.5", "+5", "5+", "-", "--1",
		"_1", "a_1", "1_a", "é1", "€5", "\xff5", "5\xff", "café1234abcd", "deadbeef", "DEADBEEF1", "deadbeef_1", "0xdeadbeef",
		"0x", "0xg1", "x0x1f", "1e10", "12ab34cd", "abcdef12", "abcdef1", "1234567a", "8f14e45f-ceea-467f-a0f8-ad5b6e4e2a11",
		"2024-05-01T12:00:00Z", "2024-05-01 12:00:00.5+02:00", "can't find 'abc'", `say "12" and '34'`, "'", `"`, "''", `""`,
		"ORD-2024-000123", "10.0.0.1:5672", "5000ms", "12.5s", "E1001", "utf8", "<n>", "…<n>", "a1 b2 c3", "ⅷ5", "٣5", "x٣5",
		"POST https://bank.example/api/v2/transfers: 503 Service Unavailable (request 9e3779b1)",
		"amount 12.34 exceeds the account's limit", "invalid IBAN 'DE00000000000000000012'", "tab\t5\n6",
	}
}

func TestGroupKeyMatchesTheRegexpRules(t *testing.T) {
	groupKeyByRegexp := regexpGroupKey()
	for _, s := range groupKeyCorpus() {
		if got, want := GroupKey(s), groupKeyByRegexp(s); got != want {
			t.Errorf("GroupKey(%q) = %q, the regexp rules give %q", s, got, want)
		}
	}
	// Random texts from the characters the rules care about.
	alphabet := []string{"0", "1", "9", "a", "f", "g", "A", "F", "x", "X", "Z", "T", "_", "-", "+", ".", ",", ":", " ", "'", `"`, "é", "€", "\xff", "٣", "ⅷ", "\t"}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 20000; i++ {
		var b strings.Builder
		for n := rng.IntN(24); n > 0; n-- {
			b.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		s := b.String()
		if got, want := GroupKey(s), groupKeyByRegexp(s); got != want {
			t.Fatalf("GroupKey(%q) = %q, the regexp rules give %q", s, got, want)
		}
	}
}

func FuzzGroupKey(f *testing.F) {
	groupKeyByRegexp := regexpGroupKey()
	for _, s := range groupKeyCorpus() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := GroupKey(s), groupKeyByRegexp(s); got != want {
			t.Fatalf("GroupKey(%q) = %q, the regexp rules give %q", s, got, want)
		}
	})
}

func BenchmarkGroupKey(b *testing.B) {
	texts := groupKeyCorpus()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		GroupKey(texts[i%len(texts)])
	}
}

func BenchmarkGroupKeyByRegexp(b *testing.B) {
	texts := groupKeyCorpus()
	groupKeyByRegexp := regexpGroupKey()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		groupKeyByRegexp(texts[i%len(texts)])
	}
}
