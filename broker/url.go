package broker

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	amqp "github.com/rabbitmq/amqp091-go"
)

// ErrBadURL is returned (wrapped) for a URL that cannot be used to connect.
var ErrBadURL = errors.New("bad broker URL")

// ErrEmptyURL is ErrBadURL for no URL at all.
var ErrEmptyURL = fmt.Errorf("%w: empty URL", ErrBadURL)

// NoPasswordError is a URL that names a user and no password. amqp091-go
// would log in as that user with the password "guest", so a broker would
// answer "wrong username or password" for a password nobody gave, or let
// guest in unasked: a dial is refused instead. It wraps ErrBadURL.
type NoPasswordError struct {
	URL  string // as given, redacted (it holds no password)
	User string
}

func (e *NoPasswordError) Error() string {
	return fmt.Sprintf("%s %q: no password given for user %q", ErrBadURL, e.URL, e.User)
}

func (e *NoPasswordError) Unwrap() error { return ErrBadURL }

// redactedPassword replaces every password parkinglot shows or logs.
const redactedPassword = "xxxxx"

// userinfoStart finds "scheme://user:" inside free text: what follows is a
// password, up to an "@" that RedactText looks for.
var userinfoStart = regexp.MustCompile(`[a-zA-Z][a-zA-Z0-9+.-]*://[^:/@\s]*:`)

// schemeStart finds where a URL begins ("scheme://").
var schemeStart = regexp.MustCompile(`[a-zA-Z][a-zA-Z0-9+.-]*://`)

// Redact returns raw with any password replaced, for display. It never fails:
// a string that is not a URL is returned with URL-shaped credentials masked.
// It works on the text rather than on url.Parse, which splits a password
// holding an unescaped "#", "?" or "/" and would leave its tail visible.
//
// raw is taken as a URL, or a comma-separated list of URLs (see SplitURLs)
// redacted URL by URL, whenever it starts with a scheme or holds none: the
// password then runs from "user:" to the last "@" of its URL, whatever it
// holds (white space, "@", "#", bytes that are not UTF-8), since people paste
// passwords unescaped and masking too much is better than showing the tail of
// one. Other text with white space goes to RedactText.
func Redact(raw string) string {
	t := strings.TrimSpace(raw)
	if strings.ContainsAny(raw, " \t\r\n") && strings.Contains(t, "://") && !startsWithScheme(t) {
		return RedactText(raw)
	}
	var b strings.Builder
	prev := 0
	for _, sep := range listCommas(raw) {
		b.WriteString(redactOne(raw[prev:sep]))
		b.WriteByte(',')
		prev = sep + 1
	}
	b.WriteString(redactOne(raw[prev:]))
	return b.String()
}

// startsWithScheme: s begins with "scheme://".
func startsWithScheme(s string) bool {
	loc := schemeStart.FindStringIndex(s)
	return loc != nil && loc[0] == 0
}

// listCommas returns the offsets of the commas that separate the URLs of a
// list in s (see listSeparator), in order.
func listCommas(s string) []int {
	var out []int
	for _, loc := range listSeparator.FindAllStringIndex(s, -1) {
		out = append(out, loc[0]+strings.IndexByte(s[loc[0]:loc[1]], ','))
	}
	return out
}

// redactOne masks the password of one URL: everything between "user:" and
// the last "@".
func redactOne(raw string) string {
	i := strings.Index(raw, "://")
	if i < 0 {
		i = -3 // "user:password@host" without a scheme is still a password
	}
	rest := raw[i+3:]
	at := strings.LastIndex(rest, "@")
	if at < 0 {
		return raw
	}
	user, _, hasPassword := strings.Cut(rest[:at], ":")
	if !hasPassword {
		return raw
	}
	return raw[:i+3] + user + ":" + redactedPassword + "@" + rest[at+1:]
}

// RedactText masks credentials of every URL that appears in free text, such as
// an error message that quotes the URL it failed on.
//
// Where a password ends is a guess in free text. A URL in double quotes (as
// %q writes it) ends at the closing quote, so its password runs to the last
// "@" inside, as in Redact. Elsewhere a URL that reads well up to the first
// white space ends there, so that text after it is left alone ("amqp://u:p@h/
// failed, mail ops@example.com"); one that does not (the password holds white
// space: "amqp://u:my pw@h/") has its password run to the last "@" before the
// next URL. A password never runs into the next URL, so every host of a list
// stays visible.
func RedactText(s string) string {
	var b strings.Builder
	for {
		loc := userinfoStart.FindStringIndex(s)
		if loc == nil {
			break
		}
		start := loc[1] // the password's first byte
		end := passwordEnd(s, loc[0], start)
		if end < 0 {
			b.WriteString(s[:start])
			s = s[start:]
			continue
		}
		b.WriteString(s[:start])
		b.WriteString(redactedPassword)
		s = s[end:] // from the "@"
	}
	b.WriteString(s)
	return b.String()
}

// passwordEnd returns the offset in s of the "@" that ends the password
// starting at start, of a URL starting at url; -1 when there is none.
func passwordEnd(s string, url, start int) int {
	// The URL ends before the next URL, and at a closing quote if quoted.
	bound := len(s)
	if loc := schemeStart.FindStringIndex(s[start:]); loc != nil {
		bound = start + loc[0]
	}
	if url > 0 && s[url-1] == '"' {
		if q := closingQuote(s[start:bound]); q >= 0 {
			bound = start + q
		}
		return lastAt(s, start, bound)
	}
	tokenEnd := bound
	if i := strings.IndexAny(s[start:bound], " \t\r\n"); i >= 0 {
		tokenEnd = start + i
	}
	token := s[start:tokenEnd]
	if at := strings.LastIndexByte(token, '@'); at >= 0 {
		if hostReads(token[at+1:]) {
			return start + at
		}
	} else if token != "" && urlReads(s[url:tokenEnd]) {
		return -1 // a URL without a password, such as "amqp://host:5672/"
	}
	if at := lastAt(s, start, bound); at >= 0 {
		return at
	}
	if at := strings.LastIndexByte(token, '@'); at >= 0 {
		return start + at
	}
	return -1
}

// lastAt is the offset of the last "@" in s[from:to], or -1.
func lastAt(s string, from, to int) int {
	if at := strings.LastIndexByte(s[from:to], '@'); at >= 0 {
		return from + at
	}
	return -1
}

// closingQuote is the offset of the first double quote in s that is not
// escaped with a backslash, or -1.
func closingQuote(s string) int {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '"':
			return i
		}
	}
	return -1
}

// trailingPunct is what text puts after a URL ("see amqp://h:5672/.").
const trailingPunct = `.,;:!)]}>'"`

// hostReads: s (what follows the "@" up to white space) starts with a host
// and optional port.
func hostReads(s string) bool {
	if i := strings.IndexAny(s, `/?#"'\`); i >= 0 {
		s = s[:i]
	}
	s = strings.TrimRight(s, trailingPunct)
	if s == "" {
		return false
	}
	u, err := url.Parse("amqp://" + s)
	return err == nil && u.Hostname() != ""
}

// urlReads: s (a URL up to white space) parses, with a host.
func urlReads(s string) bool {
	u, err := url.Parse(strings.TrimRight(s, trailingPunct))
	return err == nil && u.Hostname() != ""
}

// ParseURLs checks a comma-separated list of AMQP URLs (one URL is a list
// of one) and returns each URL with its parsed form, in the order given.
// The first bad URL fails the whole list, named by its position.
func ParseURLs(raw string) ([]string, []amqp.URI, error) {
	urls := SplitURLs(raw)
	if len(urls) == 0 {
		return nil, nil, ErrEmptyURL
	}
	uris := make([]amqp.URI, len(urls))
	for i, u := range urls {
		uri, err := ParseURL(u)
		if err != nil {
			if len(urls) > 1 {
				return nil, nil, fmt.Errorf("URL %d of %d: %w", i+1, len(urls), err)
			}
			return nil, nil, err
		}
		uris[i] = uri
	}
	return urls, uris, nil
}

// ParseURL checks one AMQP URL and returns the parsed form. Errors name the
// problem in one line and never contain the password. A list of URLs is
// refused: see ParseURLs. So is a user without a password
// (*NoPasswordError): the caller fills it in before dialling.
func ParseURL(raw string) (amqp.URI, error) {
	if strings.TrimSpace(raw) == "" {
		return amqp.URI{}, ErrEmptyURL
	}
	if IsList(raw) {
		return amqp.URI{}, fmt.Errorf("%w %q: a list of URLs where one is expected", ErrBadURL, Redact(raw))
	}
	if strings.ContainsAny(raw, " \t\r\n") {
		return amqp.URI{}, fmt.Errorf("%w %q: contains white space", ErrBadURL, Redact(raw))
	}
	if !strings.Contains(raw, "://") {
		// net/url would read "localhost:5672" or "user:pw@host" as a scheme.
		return amqp.URI{}, fmt.Errorf("%w %q: no scheme; use amqp:// or amqps://", ErrBadURL, Redact(raw))
	}
	u, err := url.Parse(raw)
	if err != nil {
		// net/url's text quotes the input, password included: say it in our words.
		if badPort(raw) {
			return amqp.URI{}, fmt.Errorf("%w %q: bad port; want a number from 1 to 65535 (percent-encode @ : / ? # %% in a password)", ErrBadURL, Redact(raw))
		}
		return amqp.URI{}, fmt.Errorf("%w %q: cannot parse it (percent-encode @ : / ? # %% in the user name or password)", ErrBadURL, Redact(raw))
	}
	if u.Fragment != "" || strings.HasSuffix(raw, "#") {
		// An unescaped "#" in a password ends the URL there: net/url would
		// read the user as the host and the password's start as the port.
		return amqp.URI{}, fmt.Errorf("%w %q: a \"#\" ends the URL (percent-encode @ : / ? # %% in the user name or password)", ErrBadURL, Redact(raw))
	}
	switch u.Scheme {
	case "amqp", "amqps":
	case "":
		return amqp.URI{}, fmt.Errorf("%w %q: no scheme; use amqp:// or amqps://", ErrBadURL, Redact(raw))
	default:
		return amqp.URI{}, fmt.Errorf("%w %q: scheme %q is not amqp or amqps", ErrBadURL, Redact(raw), u.Scheme)
	}
	if u.Hostname() == "" {
		return amqp.URI{}, fmt.Errorf("%w %q: no host", ErrBadURL, Redact(raw))
	}
	if p := u.Port(); p != "" {
		// The value is not quoted: with an unescaped "/" in the password,
		// net/url takes part of the password for the port.
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return amqp.URI{}, fmt.Errorf("%w %q: bad port; want a number from 1 to 65535", ErrBadURL, Redact(raw))
		}
	}
	uri, err := amqp.ParseURI(raw)
	if err != nil {
		return amqp.URI{}, fmt.Errorf("%w %q: %s", ErrBadURL, Redact(raw), RedactText(err.Error()))
	}
	if u.User != nil {
		if _, ok := u.User.Password(); !ok {
			return amqp.URI{}, &NoPasswordError{URL: Redact(raw), User: u.User.Username()}
		}
	}
	return uri, nil
}

// Vhost returns the virtual host named by an AMQP URL ("/" when none is
// given); for a list of URLs, the first URL's.
func Vhost(raw string) string {
	uri, err := amqp.ParseURI(FirstURL(raw))
	if err != nil || uri.Vhost == "" {
		return "/"
	}
	return uri.Vhost
}

// WithVhost puts vhost into every URL of raw that names none (a config
// context's vhost applied to its URL list).
func WithVhost(raw, vhost string) string {
	if vhost == "" || vhost == "/" {
		return raw
	}
	urls := SplitURLs(raw)
	for i, u := range urls {
		if Vhost(u) != "/" {
			continue
		}
		// Parsed, not appended to: a query (amqps://h?server_name_indication=…)
		// would take it in.
		if pu, err := url.Parse(u); err == nil {
			pu.Path, pu.RawPath = "/"+vhost, "/"+url.PathEscape(vhost)
			urls[i] = pu.String()
		}
	}
	return strings.Join(urls, ",")
}

// badPort: the authority of raw (after the scheme, before the path) ends in
// a port that is not a number, which is why net/url refused it.
func badPort(raw string) bool {
	rest := raw[strings.Index(raw, "://")+len("://"):]
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		rest = rest[:i]
	}
	if i := strings.LastIndex(rest, "@"); i >= 0 {
		rest = rest[i+1:]
	}
	if strings.HasSuffix(rest, "]") { // [::1] without a port
		return false
	}
	i := strings.LastIndex(rest, ":")
	if i < 0 {
		return false
	}
	port := rest[i+1:]
	return strings.Trim(port, "0123456789") != ""
}
