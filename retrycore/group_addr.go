package retrycore

import "strings"

// maxAddrLen bounds what replaceAddrs parses: an IPv6 address with a port
// and brackets is 47 bytes; longer runs are not tried, so a pathological
// text costs no more than a linear scan.
const maxAddrLen = 64

// replaceAddrs replaces IP addresses, with a port or not, with "<addr>":
// one service refusing connections is reported as 10.0.0.3:6379,
// [::1]:5432, ::1:5432 (Node), ('::1', 5432, 0, 0) (Python) or
// 0:0:0:0:0:0:0:1:5432 (Java), and each would be a group of its own. An
// address starts where a word does not continue (after a space, a
// slash, a colon…) and ends before a letter or digit no more.
func replaceAddrs(s string) string {
	if strings.Count(s, ":") < 2 && strings.Count(s, ".") < 3 {
		return s // what every address holds; counting is much faster than scanning
	}
	var b strings.Builder
	last := 0
	for i := 0; i < len(s); {
		start, end, with := i, 0, "<addr>"
		switch c := s[i]; {
		case c == '[': // a bracket or a parenthesis opens one wherever it is
			end = bracketedAddr(s, i)
		case c == '(':
			end, with = sockaddrTuple(s, i), "(<addr>)"
		case (isHexDigit(c) || c == ':') && (i == 0 || addrBoundary(s[i-1])):
			if start, end = bareAddr(s, i); end == 0 {
				i = start // nothing in the run is an address
				continue
			}
		}
		if end == 0 {
			i++
			continue
		}
		if b.Len() == 0 {
			b.Grow(len(s))
		}
		b.WriteString(s[last:start])
		b.WriteString(with)
		last, i = end, end
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

func isHexDigit(c byte) bool { return isDigit(c) || isHexLetter(c) }

// wordGoesOn: after an address, c continues a word, so there is none: a
// letter, a digit, _, or a placeholder's "<" (it stands for letters or
// digits: a key must key as itself).
func wordGoesOn(c byte) bool { return isWordByte(c) || c == '<' }

func isAddrByte(c byte) bool { return isHexDigit(c) || c == ':' || c == '.' }

// addrBoundary: an address may start after c ("v1.2.3.4" is a version,
// "a.10.0.0.1" no address).
func addrBoundary(c byte) bool { return !isWordByte(c) && c != '.' }

// bareAddr returns where an unbracketed address starts at i or after a
// colon of the run of address bytes from i ("db:10.0.0.1"), and where it
// ends; end is 0 when there is none, and start the end of the run.
func bareAddr(s string, i int) (start, end int) {
	j, colons, dots := i, 0, 0
	for ; j < len(s) && isAddrByte(s[j]); j++ {
		switch s[j] {
		case ':':
			colons++
		case '.':
			dots++
		}
	}
	if colons < 2 && dots < 3 || j < len(s) && wordGoesOn(s[j]) {
		return j, 0 // an address has 2 colons or 3 dots: words and numbers have none
	}
	for p := i; p < j; {
		if j-p <= maxAddrLen {
			if validAddr(s[p:j]) {
				return p, j
			}
			// A colon or a full stop after the address ends the clause it is in.
			if t := s[j-1]; (t == ':' || t == '.') && j-1 > p && validAddr(s[p:j-1]) {
				return p, j - 1
			}
		}
		k := strings.IndexByte(s[p:j], ':')
		if k < 0 {
			break
		}
		p += k + 1
	}
	return j, 0
}

// validAddr: t is an IPv4 address (four parts), an IPv6 one holding a
// decimal digit ("dead::beef" is rather a word), or either with a port.
func validAddr(t string) bool {
	colons, dots := strings.Count(t, ":"), strings.Count(t, ".")
	if colons < 2 && dots != 3 {
		return false
	}
	if v4, ok := parseIP(t); ok {
		return v4 || strings.ContainsAny(t, "0123456789")
	}
	k := strings.LastIndexByte(t, ':')
	if k < 0 || !allDigits(t[k+1:]) {
		return false
	}
	v4, ok := parseIP(t[:k])
	return ok && (v4 || strings.ContainsAny(t[:k], "0123456789"))
}

// parseIP is netip.ParseAddr's syntax without a zone, without its
// allocation of an error for every text that is no address.
func parseIP(t string) (v4, ok bool) {
	if strings.IndexByte(t, ':') < 0 {
		return true, isIPv4(t)
	}
	return false, isIPv6(t)
}

// isIPv4: four decimal parts of 0 to 255, without leading zeros.
func isIPv4(t string) bool {
	for i, parts := 0, 1; ; parts++ {
		j, v := i, 0
		for j < len(t) && isDigit(t[j]) && j-i < 4 {
			v = v*10 + int(t[j]-'0')
			j++
		}
		if n := j - i; n == 0 || n > 3 || n > 1 && t[i] == '0' || v > 255 {
			return false
		}
		if j == len(t) {
			return parts == 4
		}
		if t[j] != '.' || parts == 4 {
			return false
		}
		i = j + 1
	}
}

// isIPv6: up to eight groups of 1 to 4 hex digits, one "::" standing for
// at least one zero group, the last two groups possibly an IPv4 address.
func isIPv6(t string) bool {
	groups, ellipsis, i := 0, false, 0
	if strings.HasPrefix(t, "::") {
		ellipsis, i = true, 2
	}
	for i < len(t) {
		j := i
		for j < len(t) && isHexDigit(t[j]) && j-i < 5 {
			j++
		}
		if j < len(t) && t[j] == '.' {
			if groups > 6 || !isIPv4(t[i:]) {
				return false
			}
			groups += 2
			break
		}
		if n := j - i; n == 0 || n > 4 || groups == 8 {
			return false
		}
		groups++
		if j == len(t) {
			break
		}
		if t[j] != ':' || j+1 == len(t) {
			return false
		}
		i = j + 1
		if t[i] == ':' {
			if ellipsis {
				return false
			}
			ellipsis = true
			i++
		}
	}
	if ellipsis {
		return groups < 8
	}
	return groups == 8
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return s != ""
}

// bracketedAddr returns the end of "[IPv6%zone]:port" at i, 0 if none.
func bracketedAddr(s string, i int) int {
	k := strings.IndexByte(s[i+1:min(len(s), i+1+maxAddrLen)], ']')
	if k < 0 {
		return 0
	}
	inner := s[i+1 : i+1+k]
	if z := strings.IndexByte(inner, '%'); z >= 0 {
		inner = inner[:z] // the zone: any bytes, not parsed
	}
	if v4, ok := parseIP(inner); !ok || v4 {
		return 0
	}
	j := i + 1 + k + 1
	if j+1 < len(s) && s[j] == ':' && isDigit(s[j+1]) {
		j++
		for j < len(s) && isDigit(s[j]) {
			j++
		}
	}
	if j < len(s) && wordGoesOn(s[j]) {
		return 0
	}
	return j
}

// sockaddrTuple returns the end of a Python socket address at i,
// ('10.0.0.1', 5432) or ('::1', 5432, 0, 0), 0 if none.
func sockaddrTuple(s string, i int) int {
	if i+1 >= len(s) || s[i+1] != '\'' && s[i+1] != '"' {
		return 0
	}
	q := s[i+1]
	k := strings.IndexByte(s[i+2:min(len(s), i+2+maxAddrLen)], q)
	if k < 0 {
		return 0
	}
	if _, ok := parseIP(s[i+2 : i+2+k]); !ok {
		return 0
	}
	j, numbers := i+2+k+1, 0
	for numbers < 3 && strings.HasPrefix(s[j:], ", ") && j+2 < len(s) && isDigit(s[j+2]) {
		j += 2
		for j < len(s) && isDigit(s[j]) {
			j++
		}
		numbers++
	}
	if numbers == 0 || j >= len(s) || s[j] != ')' {
		return 0
	}
	return j + 1
}
