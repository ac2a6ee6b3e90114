package retrycore

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Placeholders are replaced in this order: IP addresses first (a Python
// sockaddr is a quoted address in a tuple), quoted values (they may hold
// anything), then times, UUIDs, 0x hex, ids and numbers (addresses, ids and
// numbers by scanning, in GroupKey). A rule runs only when need says the
// text holds what every match of it holds: the regular expressions cost
// microseconds each even when nothing matches, and a browse groups every
// message of a 100k parking lot.
var groupRules = []struct {
	re   *regexp.Regexp
	with string // a regexp template: ${1} is what the rule matched before the value
	need func(s string) bool
}{
	{re: regexp.MustCompile(`"[^"]*"`), with: `"…"`, need: func(s string) bool { return strings.Count(s, `"`) >= 2 }},
	// An apostrophe after a letter is one ("can't"), not an opening quote;
	// nor after a placeholder, which stands for letters or digits.
	{re: regexp.MustCompile(`(^|[^\p{L}\d>])'[^']*'`), with: `${1}'…'`, need: func(s string) bool { return strings.Count(s, "'") >= 2 }},
	{re: regexp.MustCompile(`\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?`), with: "<time>",
		need: func(s string) bool { return strings.IndexByte(s, ':') >= 0 && strings.IndexByte(s, '-') >= 0 }},
	{re: regexp.MustCompile(`(?i)\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b`), with: "<uuid>",
		need: func(s string) bool { return strings.Count(s, "-") >= 4 }},
	{re: regexp.MustCompile(`(?i)\b0x[0-9a-f]+\b`), with: "<hex>",
		need: func(s string) bool { return strings.Contains(s, "0x") || strings.Contains(s, "0X") }},
}

// GroupKey normalises an error text so that failures with one cause fall
// into one group: "transfer 123 not found" and "transfer 456 not found"
// both become "transfer <n> not found". The key is what a group is counted
// and alerted by; the texts of its messages are not changed.
//
// A stack trace (a text of several lines holding Java, .NET, Node, Python
// or Go frames) is keyed by its exception and the frame of the code that
// threw it (see traceKey): "java.lang.IllegalStateException: insufficient
// funds for transfer T-<id> at com.acme.Ledger.debit(Ledger.java)". Any
// other text is masked, in this order:
//
//   - an IPv4 or IPv6 address, with its port, bracketed or not, or a
//     Python sockaddr tuple: <addr> ("connect ECONNREFUSED 10.0.0.3:6379",
//     "… [::1]:5432" and "… ::1:5432" are one group);
//   - a quoted value: "…" or '…';
//   - a time (RFC 3339 or with a space): <time>; a UUID: <uuid>; 0x hex: <hex>;
//   - an id, <id>: a run of ASCII letters and digits holding both that is
//     hex of 6 or more ("7f3a9c"), or starts with a digit and has a digit
//     after a letter ("8f2a"), or is letters then 6 digits or more
//     ("ORD123456"), or starts with a letter, is 8 long or more, and after
//     its first digit has another digit or no run of 3 letters
//     ("x7k9p2q4"); or, after a prefix of letters and - or _ ("ORD-",
//     "T-", "cus_"), one holding a digit that is hex of 4 or more with a
//     letter ("T-8f2a"), 6 digits or more (a hex id without a letter), or
//     starts with a letter and is 8 long or more;
//   - a duration of several units ("1m30s", "2h0m0s"): <n> and its last unit;
//   - a number, also before a unit ("5000ms"): <n>.
//
// Words stay: a run without a digit ("cafe"), codes and names ("E1001",
// "utf8", "sha256", "Uint8Array", "log4j") and a number with a unit.
// Whitespace is collapsed. The scans replace regular expressions that were
// most of the cost (group_ref_test.go holds those expressions, as the
// specification the scans must agree with).
func GroupKey(text string) string {
	if strings.IndexByte(text, '\n') >= 0 {
		if k, ok := traceKey(text, ""); ok {
			return k
		}
	}
	return lineKey(text)
}

// lineKey is GroupKey without stack traces.
func lineKey(text string) string {
	// A key is a metric label and a JSON key: valid UTF-8 whatever the
	// header held.
	s := strings.TrimSpace(strings.ToValidUTF8(text, "\uFFFD"))
	s = replaceAddrs(s)
	for _, r := range groupRules {
		if r.need(s) {
			s = r.re.ReplaceAllString(s, r.with)
		}
	}
	s = replaceIDs(s)
	s = replaceNumbers(s)
	return strings.Join(strings.Fields(s), " ")
}

// isWordByte is regexp's \b notion of a word character (ASCII letters,
// digits and _); a byte of a multi-byte rune never is one.
func isWordByte(c byte) bool {
	return c == '_' || isAlnum(c)
}

func isAlnum(c byte) bool { return isDigit(c) || isLetter(c) }

func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

func isHexLetter(c byte) bool { return 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

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
