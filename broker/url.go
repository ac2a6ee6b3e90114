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

// redactedPassword replaces every password parkinglot shows or logs.
const redactedPassword = "xxxxx"

// userinfoPattern finds "scheme://user:password@" inside free text, so that
// error strings from libraries (which may quote the URL) are redacted too.
// The password runs to the last "@" before white space: people paste
// passwords with unescaped "@", "/", "?" or "#", and masking too much is
// better than showing the tail of one.
var userinfoPattern = regexp.MustCompile(`([a-zA-Z][a-zA-Z0-9+.-]*://[^:/@\s]*):(\S*)@`)

// Redact returns raw with any password replaced, for display. It never fails:
// a string that is not a URL is returned with URL-shaped credentials masked.
// It works on the text rather than on url.Parse, which splits a password
// holding an unescaped "#", "?" or "/" and would leave its tail visible.
//
// A comma-separated list of URLs (see SplitURLs) is redacted URL by URL.
func Redact(raw string) string {
	if us := SplitURLs(raw); len(us) > 1 && !strings.ContainsAny(raw, " \t\r\n") {
		for i, u := range us {
			us[i] = Redact(u)
		}
		return strings.Join(us, ",")
	}
	if strings.ContainsAny(raw, " \t\r\n") {
		return RedactText(raw)
	}
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
// A list of URLs in the text is cut at its commas first, so that each URL's
// password is masked and every host stays visible.
func RedactText(s string) string {
	var b strings.Builder
	for {
		loc := listSeparator.FindStringIndex(s)
		if loc == nil {
			break
		}
		sep := loc[0] + strings.IndexByte(s[loc[0]:loc[1]], ',')
		b.WriteString(userinfoPattern.ReplaceAllString(s[:sep+1], "$1:"+redactedPassword+"@"))
		s = s[sep+1:]
	}
	b.WriteString(userinfoPattern.ReplaceAllString(s, "$1:"+redactedPassword+"@"))
	return b.String()
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
// refused: see ParseURLs.
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
		if Vhost(u) == "/" {
			urls[i] = strings.TrimSuffix(u, "/") + "/" + url.PathEscape(vhost)
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
