package retrycore

import "strings"

// replaceIDs replaces the ids of GroupKey's rule with "<id>" and durations
// of several units with "<n>" and their last unit, in one pass over the
// runs of ASCII letters and digits. A random id of one family must get one
// placeholder whatever its characters happen to be (a hex id without a
// letter, a base-36 one that is all hex), or its failures split into
// groups.
func replaceIDs(s string) string {
	var b strings.Builder
	last := 0
	put := func(start, end int, with string) {
		if b.Len() == 0 {
			b.Grow(len(s))
		}
		b.WriteString(s[last:start])
		b.WriteString(with)
		last = end
	}
	// prefixEnd is the end of the last run made of letters alone: a run
	// that starts one separator after it has a prefix ("ORD-7f3a9c"). Not
	// one right after a placeholder: "0A-A000" keys as "<n>A-A000", and
	// that key must key as itself.
	prefixEnd := -2
	for i := 0; i < len(s); {
		if !isAlnum(s[i]) {
			i++
			continue
		}
		if isDigit(s[i]) {
			if end, unit, ok := duration(s, i); ok {
				put(i, end, "<n>"+unit)
				i = end
				continue
			}
		}
		j, r := scanRun(s, i)
		prefixed := prefixEnd == i-1 && (s[i-1] == '-' || s[i-1] == '_')
		if r.digits > 0 && (r.isID(j-i) || prefixed && r.isPrefixedID(j-i)) {
			put(i, j, "<id>")
		}
		if r.digits == 0 && (i == 0 || s[i-1] != '>') {
			prefixEnd = j
		}
		i = j
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// run is what replaceIDs needs to know of a run of letters and digits.
type run struct {
	digits, letters int
	allHex          bool
	digitFirst      bool
	// turns counts the changes between letters and digits; digitRuns the
	// runs of digits; longLetters whether 3 letters follow one another
	// after the first digit; tailDigits the digits the run ends with.
	turns, digitRuns int
	longLetters      bool
	tailDigits       int
}

// scanRun reads the run of ASCII letters and digits at i.
func scanRun(s string, i int) (int, run) {
	r := run{allHex: true, digitFirst: isDigit(s[i])}
	letterStreak := 0
	j := i
	for ; j < len(s) && isAlnum(s[j]); j++ {
		c := s[j]
		if isDigit(c) {
			if j == i || !isDigit(s[j-1]) {
				r.digitRuns++
				if j > i {
					r.turns++
				}
			}
			r.digits++
			r.tailDigits++
			letterStreak = 0
			continue
		}
		if j > i && isDigit(s[j-1]) {
			r.turns++
		}
		r.letters++
		r.tailDigits = 0
		r.allHex = r.allHex && isHexLetter(c)
		letterStreak++
		if letterStreak >= 3 && r.digits > 0 {
			r.longLetters = true
		}
	}
	return j, r
}

// isID: a run that holds a digit is an id by its shape alone.
func (r run) isID(n int) bool {
	switch {
	case r.letters == 0:
		return false // a number
	case r.allHex && n >= 6:
		return true // 7f3a9c, 507f1f77bcf86cd799439011
	case r.digitFirst:
		return r.turns >= 2 // 8f2a; 5000ms is a number with a unit
	case r.turns == 1:
		return r.tailDigits >= 6 // ORD123456; E1001, sha256 are names
	default:
		return n >= 8 && (r.digitRuns >= 2 || !r.longLetters) // x7k9p2q4; Uint8Array is a name
	}
}

// isPrefixedID: after a prefix ("T-", "cus_") shorter runs are ids too.
func (r run) isPrefixedID(n int) bool {
	switch {
	case r.letters == 0:
		return n >= 6 // T-829311, a hex id without a letter; pay-1042 is a number
	case r.allHex:
		return n >= 4 // T-8f2a
	default:
		return !r.digitFirst && n >= 8 // cus_NffrFeUf9Hib
	}
}

// duration reads a Go-style duration of two units or more at i
// ("1m30s", "2h0m0.5s", "1m30µs") and returns its end and last unit; ok is
// false for anything else, one unit included (replaceNumbers masks "45s").
func duration(s string, i int) (end int, unit string, ok bool) {
	units := 0
	j := i
	for j < len(s) && isDigit(s[j]) {
		for j < len(s) && isDigit(s[j]) {
			j++
		}
		if j+1 < len(s) && s[j] == '.' && isDigit(s[j+1]) {
			j += 2
			for j < len(s) && isDigit(s[j]) {
				j++
			}
		}
		u := durationUnit(s[j:])
		if u == "" {
			return 0, "", false
		}
		j += len(u)
		unit = u
		units++
	}
	if units < 2 || j < len(s) && isWordByte(s[j]) {
		return 0, "", false
	}
	return j, unit, true
}

// durationUnits are Go's, longest first where one begins another.
var durationUnits = []string{"h", "ms", "m", "s", "us", "µs", "ns"}

func durationUnit(s string) string {
	for _, u := range durationUnits {
		if strings.HasPrefix(s, u) {
			return u
		}
	}
	return ""
}
