package broker

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"

	amqp "github.com/rabbitmq/amqp091-go"
)

// ErrBadURL is returned (wrapped) for a URL that cannot be used to connect.
var ErrBadURL = errors.New("bad broker URL")

// redactedPassword replaces every password parkinglot shows or logs.
const redactedPassword = "xxxxx"

// userinfoPattern finds "scheme://user:password@" inside free text, so that
// error strings from libraries (which may quote the URL) are redacted too.
var userinfoPattern = regexp.MustCompile(`([a-zA-Z][a-zA-Z0-9+.-]*://[^:/@\s]*):([^@\s]*)@`)

// Redact returns raw with any password replaced, for display. It never fails:
// a string that is not a URL is returned with URL-shaped credentials masked.
func Redact(raw string) string {
	u, err := url.Parse(raw)
	if err == nil && u.User != nil {
		if _, has := u.User.Password(); has {
			u.User = url.UserPassword(u.User.Username(), redactedPassword)
			return u.String()
		}
		return raw
	}
	return RedactText(raw)
}

// RedactText masks credentials of every URL that appears in free text, such as
// an error message that quotes the URL it failed on.
func RedactText(s string) string {
	return userinfoPattern.ReplaceAllString(s, "$1:"+redactedPassword+"@")
}

// ParseURL checks an AMQP URL and returns the parsed form. Errors name the
// problem in one line and never contain the password.
func ParseURL(raw string) (amqp.URI, error) {
	if strings.TrimSpace(raw) == "" {
		return amqp.URI{}, fmt.Errorf("%w: empty URL (set --url or PARKINGLOT_URL)", ErrBadURL)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return amqp.URI{}, fmt.Errorf("%w %q: cannot parse it", ErrBadURL, Redact(raw))
	}
	switch u.Scheme {
	case "amqp", "amqps":
	case "":
		return amqp.URI{}, fmt.Errorf("%w %q: no scheme; use amqp:// or amqps://", ErrBadURL, Redact(raw))
	default:
		return amqp.URI{}, fmt.Errorf("%w %q: scheme %q is not amqp or amqps", ErrBadURL, Redact(raw), u.Scheme)
	}
	if u.Host == "" {
		return amqp.URI{}, fmt.Errorf("%w %q: no host", ErrBadURL, Redact(raw))
	}
	uri, err := amqp.ParseURI(raw)
	if err != nil {
		return amqp.URI{}, fmt.Errorf("%w %q: %s", ErrBadURL, Redact(raw), RedactText(err.Error()))
	}
	return uri, nil
}

// Vhost returns the virtual host named by an AMQP URL ("/" when none is given).
func Vhost(raw string) string {
	uri, err := amqp.ParseURI(raw)
	if err != nil || uri.Vhost == "" {
		return "/"
	}
	return uri.Vhost
}
