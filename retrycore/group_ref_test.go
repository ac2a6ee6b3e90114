package retrycore

import (
	"math/rand/v2"
	"net/netip"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

// regexpGroupKey is GroupKey's rule for a text that is no stack trace,
// written plainly: regular expressions tried at every position, netip for
// addresses. GroupKey scans instead, for speed, and must give the same key
// for every text.
func regexpGroupKey() func(text string) string {
	rules := []struct {
		re   *regexp.Regexp
		with string
	}{
		{regexp.MustCompile(`"[^"]*"`), `"…"`},
		{regexp.MustCompile(`(^|[^\p{L}\d>])'[^']*'`), `${1}'…'`},
		{regexp.MustCompile(`\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?`), "<time>"},
		{regexp.MustCompile(`(?i)\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b`), "<uuid>"},
		{regexp.MustCompile(`(?i)\b0x[0-9a-f]+\b`), "<hex>"},
	}
	number := regexp.MustCompile(`(^|[^\p{L}\d_])[-+]?\d+(?:\.\d+)?`)
	return func(text string) string {
		s := strings.TrimSpace(strings.ToValidUTF8(text, "\uFFFD"))
		s = refAddrs(s)
		for _, r := range rules {
			s = r.re.ReplaceAllString(s, r.with)
		}
		s = refIDs(s)
		s = number.ReplaceAllString(s, "${1}<n>")
		return strings.Join(strings.Fields(s), " ")
	}
}

var (
	refBracketed = regexp.MustCompile(`^\[([^\]]{0,63})\]((?::[0-9]+)?)`)
	refTuples    = []*regexp.Regexp{
		regexp.MustCompile(`^\('([^']{0,63})'(?:, [0-9]+){1,3}\)`),
		regexp.MustCompile(`^\("([^"]{0,63})"(?:, [0-9]+){1,3}\)`),
	}
	refAddrRun  = regexp.MustCompile(`^[0-9A-Fa-f:.]+`)
	refDuration = regexp.MustCompile(`^(?:[0-9]+(?:\.[0-9]+)?(?:h|ms|m|s|us|µs|ns)){2,}`)
	refSegment  = regexp.MustCompile(`^[A-Za-z0-9]+`)
	refPrefix   = regexp.MustCompile(`(?:^|[^A-Za-z0-9>])[A-Za-z]+[-_]$`)
)

func refWordByte(s string, i int) bool {
	return i < len(s) && (s[i] == '_' || 'a' <= s[i] && s[i] <= 'z' || 'A' <= s[i] && s[i] <= 'Z' || '0' <= s[i] && s[i] <= '9')
}

func refWordGoesOn(s string, i int) bool { return refWordByte(s, i) || i < len(s) && s[i] == '<' }

// refAddrs: at each position, in order, a bracketed IPv6 address (port
// optional), a Python sockaddr tuple, or, where no word or "." goes on
// before it, an IPv4 or IPv6 address with or without a port: the run of
// address characters from there (at most 64, not followed by a word
// character), or that run without a final "." or ":".
func refAddrs(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		rest := s[i:]
		if m := refBracketed.FindStringSubmatch(rest); m != nil {
			zoneless, _, _ := strings.Cut(m[1], "%")
			if ip, err := netip.ParseAddr(zoneless); err == nil && ip.Is6() && !refWordGoesOn(s, i+len(m[0])) {
				b.WriteString("<addr>")
				i += len(m[0])
				continue
			}
		}
		found := false
		for _, re := range refTuples {
			if m := re.FindStringSubmatch(rest); m != nil && !strings.Contains(m[1], "%") {
				if _, err := netip.ParseAddr(m[1]); err == nil {
					b.WriteString("(<addr>)")
					i += len(m[0])
					found = true
					break
				}
			}
		}
		if found {
			continue
		}
		if run := refAddrRun.FindString(rest); run != "" && (i == 0 || !refWordByte(s, i-1) && s[i-1] != '.') &&
			!refWordGoesOn(s, i+len(run)) && len(run) <= 64 && (run[0] != '.') {
			n := 0
			if refIsAddr(run) {
				n = len(run)
			} else if t := run[len(run)-1]; (t == '.' || t == ':') && len(run) > 1 && refIsAddr(run[:len(run)-1]) {
				n = len(run) - 1
			}
			if n > 0 {
				b.WriteString("<addr>")
				i += n
				continue
			}
		}
		b.WriteByte(s[i])
		i++
	}
	return b.String()
}

func refIsAddr(t string) bool {
	ok := func(a string) bool {
		ip, err := netip.ParseAddr(a)
		return err == nil && !strings.Contains(a, "%") && (ip.Is4() && strings.Count(a, ".") == 3 ||
			ip.Is6() && strings.ContainsAny(a, "0123456789"))
	}
	if ok(t) {
		return true
	}
	k := strings.LastIndex(t, ":")
	return k >= 0 && regexp.MustCompile(`^[0-9]+$`).MatchString(t[k+1:]) && ok(t[:k])
}

// refIDs: at the start of each run of ASCII letters and digits, a duration
// of two units or more not followed by a word character, else the run is
// an id by the rule in GroupKey's comment.
func refIDs(s string) string {
	match := func(re, t string) bool { return regexp.MustCompile(re).MatchString(t) }
	isID := func(seg string, prefixed bool) bool {
		if !match(`[0-9]`, seg) {
			return false
		}
		hasLetter, hex := match(`[A-Za-z]`, seg), match(`^[0-9A-Fa-f]+$`, seg)
		if hasLetter {
			d := strings.IndexAny(seg, "0123456789")
			switch {
			case hex && len(seg) >= 6,
				match(`^[0-9]`, seg) && match(`[A-Za-z][0-9]`, seg),
				match(`^[A-Za-z]+[0-9]{6,}$`, seg),
				match(`^[A-Za-z]`, seg) && len(seg) >= 8 && match(`[0-9][A-Za-z]`, seg) &&
					(match(`[0-9][A-Za-z]+[0-9]`, seg) || !match(`[A-Za-z]{3,}`, seg[d:])):
				return true
			}
		}
		if !prefixed {
			return false
		}
		return !hasLetter && len(seg) >= 6 || hasLetter && hex && len(seg) >= 4 ||
			hasLetter && !hex && match(`^[A-Za-z]`, seg) && len(seg) >= 8
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		alnum := func(j int) bool { return refWordByte(s, j) && s[j] != '_' }
		if !alnum(i) || i > 0 && alnum(i-1) {
			b.WriteByte(s[i])
			i++
			continue
		}
		if d := refDuration.FindString(s[i:]); d != "" && !refWordByte(s, i+len(d)) {
			unit := regexp.MustCompile(`(h|ms|m|s|us|µs|ns)$`).FindString(d)
			b.WriteString("<n>" + unit)
			i += len(d)
			continue
		}
		seg := refSegment.FindString(s[i:])
		if isID(seg, refPrefix.MatchString(s[:i])) {
			b.WriteString("<id>")
		} else {
			b.WriteString(seg)
		}
		i += len(seg)
	}
	return b.String()
}

// groupKeyCorpus is texts that probe the edges of every rule (and the
// benchmark's texts: keep them as they are, so that figures compare).
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

// groupKeyEdges probe the rules for ids, durations and addresses.
func groupKeyEdges() []string {
	return []string{
		"ORD-7f3a9c", "0A-A000", "x>T-8f2a", "AA0 \xd70'00000000000'", "[::]00", "T-8f2a", "T-8f", "T-829311", "T-82931", "cus_NffrFeUf9Hib", "cus_NffrFeUfNVHib", "x-abc1234", "a-1b2c3d-4e5f6a",
		"ORD123456", "ORD12345", "x7k9p2q4", "kqzmt4xp", "Uint8Array", "Log4j2Plugin", "log4j", "sha256sum", "a1b2c3", "a1b2c",
		"1m30s", "1m30.5s", "2h0m0s", "1m30µs", "1m30sx", "1m2m3", "1ms5s", "_1m30s", "1.1m30s", "45s", "1h", "5m30",
		"10.0.0.1", "10.0.0.1:5432:", "10.0.0.1.", "10.0.0.1x", "x10.0.0.1", "v1.2.3.4", "db:10.0.0.1", "010.0.0.1", "256.0.0.1",
		"::1", "::1:5432", "[::1]:5432", "[::1]:x", "[::]", "[fe80::1%eth0]:80", "[[::1]]", "fe80::", "dead::beef", "1::2::3",
		"0:0:0:0:0:0:0:1:5432", "1:2:3:4:5:6:7:8", "1:2:3:4:5:6:7:8:9:10", "::ffff:10.0.0.1", "12:30:45", "ab::10.0.0.1",
		"('127.0.0.1', 5432)", "('::1', 5432, 0, 0)", `("::1", 1)`, "('::1', 1, 2, 3, 4)", "('x', 1)", "(':", "[", "('::1'",
		"connect ECONNREFUSED 127.0.0.1:5432", "dial tcp [::1]:5432: connect: connection refused",
	}
}

func TestGroupKeyMatchesTheRegexpRules(t *testing.T) {
	groupKeyByRegexp := regexpGroupKey()
	for _, s := range append(groupKeyCorpus(), groupKeyEdges()...) {
		if got, want := lineKey(s), groupKeyByRegexp(s); got != want {
			t.Errorf("lineKey(%q) = %q, the regexp rules give %q", s, got, want)
		}
	}
	// Random texts from the characters the rules care about.
	alphabet := []string{"0", "1", "9", "a", "f", "g", "A", "F", "x", "X", "Z", "T", "_", "-", "+", ".", ",", ":", " ", "'", `"`, "é", "€", "\xff", "٣", "ⅷ",
		"\t", "[", "]", "(", ")", "%", "m", "s", "h", "µ", ", ", "::", "1.2.3.4", "::1"}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 20000; i++ {
		var b strings.Builder
		for n := rng.IntN(24); n > 0; n-- {
			b.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		s := b.String()
		if got, want := lineKey(s), groupKeyByRegexp(s); got != want {
			t.Fatalf("lineKey(%q) = %q, the regexp rules give %q", s, got, want)
		}
	}
}

// FuzzGroupKey: a text's key is the regexp rules' unless it is a stack
// trace; any key is one line of valid UTF-8, and a key keeps its key.
func FuzzGroupKey(f *testing.F) {
	groupKeyByRegexp := regexpGroupKey()
	for _, s := range append(groupKeyCorpus(), groupKeyEdges()...) {
		f.Add(s)
	}
	for _, tc := range traceCases() {
		f.Add(tc.text)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := lineKey(s), groupKeyByRegexp(s); got != want {
			t.Fatalf("lineKey(%q) = %q, the regexp rules give %q", s, got, want)
		}
		k := GroupKey(s)
		if !utf8.ValidString(k) || strings.ContainsAny(k, "\r\n") {
			t.Fatalf("GroupKey(%q) = %q: not one line of valid UTF-8", s, k)
		}
		if !strings.Contains(s, "\n") && GroupKey(k) != k {
			t.Fatalf("GroupKey(%q) = %q, whose key is %q", s, k, GroupKey(k))
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
