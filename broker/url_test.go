package broker

import (
	"errors"
	"strings"
	"testing"
)

func TestRedact(t *testing.T) {
	cases := []struct {
		name, in, want string
		secret         string // must not appear in the output
	}{
		{"password", "amqp://guest:s3cret@localhost:5672/", "amqp://guest:xxxxx@localhost:5672/", "s3cret"},
		{"amqps with vhost and query", "amqps://app:hunter2@mq.example.com:5671/prod?heartbeat=10", "amqps://app:xxxxx@mq.example.com:5671/prod?heartbeat=10", "hunter2"},
		{"management http", "http://admin:pa55@127.0.0.1:15672", "http://admin:xxxxx@127.0.0.1:15672", "pa55"},
		{"no password", "amqp://guest@localhost/", "amqp://guest@localhost/", ""},
		{"no credentials", "amqp://localhost:5672/%2f", "amqp://localhost:5672/%2f", ""},
		{"empty password", "amqp://guest:@localhost/", "amqp://guest:xxxxx@localhost/", ""},
		{"percent-encoded specials", "amqp://u:p%40%3A%2F%3F%23%25w@host/", "amqp://u:xxxxx@host/", "p%40"},
		// People paste passwords without escaping them; none of it may show.
		{"raw @ in password", "amqp://u:p@ss@host/", "amqp://u:xxxxx@host/", "ss"},
		{"raw : in password", "amqp://u:p:ss@host/", "amqp://u:xxxxx@host/", "p:ss"},
		{"raw / in password", "amqp://u:pa/ss@host/", "amqp://u:xxxxx@host/", "ss"},
		{"raw ? in password", "amqp://u:pa?ss@host/", "amqp://u:xxxxx@host/", "ss"},
		{"raw # in password", "amqp://u:pa#ss@host/", "amqp://u:xxxxx@host/", "ss"},
		{"raw % in password", "amqp://u:100%zz@host/", "amqp://u:xxxxx@host/", "zz"},
		{"every special at once", "amqps://u:a@b:c/d?e#f%g@host:5671/v", "amqps://u:xxxxx@host:5671/v", "e#f"},
		{"no scheme", "guest:s3cret@localhost:5672/", "guest:xxxxx@localhost:5672/", "s3cret"},
		{"not a URL", "just some text", "just some text", ""},
		{"e-mail address", "ops@example.com", "ops@example.com", ""},
		// "@" in a vhost cannot be told from one in a password: mask.
		{"@ after a port", "amqp://host:5672/v@x", "amqp://host:xxxxx@x", "5672"},
		{"text quoting a URL", `dial "amqp://guest:s3cret@10.0.0.1:5672/": connection refused`, `dial "amqp://guest:xxxxx@10.0.0.1:5672/": connection refused`, "s3cret"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Redact(c.in)
			if got != c.want {
				t.Errorf("Redact(%q) = %q, want %q", c.in, got, c.want)
			}
			if c.secret != "" && strings.Contains(got, c.secret) {
				t.Errorf("Redact(%q) = %q shows %q", c.in, got, c.secret)
			}
		})
	}
}

func TestRedactText(t *testing.T) {
	cases := []struct {
		name, in, want string
	}{
		{"two URLs", "from amqp://a:one@h1/ to amqps://b:two@h2:5671/v", "from amqp://a:xxxxx@h1/ to amqps://b:xxxxx@h2:5671/v"},
		{"URL in Go %q", `parse "amqp://u:p#w@h/": invalid`, `parse "amqp://u:xxxxx@h/": invalid`},
		{"raw @ inside password", "url=amqp://u:p@ss@host/ failed", "url=amqp://u:xxxxx@host/ failed"},
		{"line breaks", "a\namqp://u:p@h/\nb", "a\namqp://u:xxxxx@h/\nb"},
		{"no credentials", "amqp://localhost/ and user@example.com", "amqp://localhost/ and user@example.com"},
		{"user without password", "amqp://guest@h/", "amqp://guest@h/"},
		{"already redacted", "amqp://u:xxxxx@h/", "amqp://u:xxxxx@h/"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := RedactText(c.in); got != c.want {
				t.Errorf("RedactText(%q) = %q, want %q", c.in, got, c.want)
			}
		})
	}
}

func TestParseURL(t *testing.T) {
	uri, err := ParseURL("amqps://app:p%40ss@mq.example.com:5671/prod")
	if err != nil {
		t.Fatal(err)
	}
	if uri.Scheme != "amqps" || uri.Host != "mq.example.com" || uri.Port != 5671 || uri.Vhost != "prod" || uri.Username != "app" || uri.Password != "p@ss" {
		t.Fatalf("parsed %+v", uri)
	}
	if uri, err := ParseURL("amqp://guest:guest@localhost/"); err != nil || uri.Port != 5672 {
		t.Fatalf("default port: %+v %v", uri, err)
	}
}

func TestParseURLErrors(t *testing.T) {
	const pw = "Sup3r-Secret"
	cases := []struct {
		name, in, want string
	}{
		{"empty", "", "empty URL"},
		{"blank", "   ", "empty URL"},
		{"no scheme", "guest:" + pw + "@localhost:5672/", "no scheme"},
		{"host without scheme", "localhost:5672", "no scheme"},
		{"wrong scheme", "http://guest:" + pw + "@localhost:15672/", `scheme "http" is not amqp or amqps`},
		{"no host", "amqp://guest:" + pw + "@/vhost", "no host"},
		{"only a port", "amqp://guest:" + pw + "@:5672/", "no host"},
		{"port not a number", "amqp://guest:" + pw + "@localhost:abc/", "bad port"},
		{"port out of range", "amqp://guest:" + pw + "@localhost:70000/", "bad port"},
		{"port zero", "amqp://guest:" + pw + "@localhost:0/", "bad port"},
		// An unescaped "/" makes net/url read part of the password as a port.
		{"raw slash in password", "amqp://guest:" + pw + "/x@localhost/", "bad port"},
		{"raw slash, numeric", "amqp://guest:99999/" + pw + "@localhost/", "bad port"},
		{"bad escape", "amqp://guest:" + pw + "%zz@localhost/", "cannot parse it"},
		{"white space", "amqp://guest:" + pw + "@local host/", "white space"},
		{"bad heartbeat", "amqp://guest:" + pw + "@localhost/?heartbeat=x", "heartbeat"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseURL(c.in)
			if err == nil {
				t.Fatalf("ParseURL(%q) accepted it", c.in)
			}
			msg := err.Error()
			if !errors.Is(err, ErrBadURL) {
				t.Errorf("%q does not wrap ErrBadURL", msg)
			}
			if !strings.Contains(msg, c.want) {
				t.Errorf("error %q does not say %q", msg, c.want)
			}
			if strings.Contains(msg, pw) || strings.Contains(msg, "Secret") || strings.Contains(msg, "99999") {
				t.Errorf("error %q shows (part of) the password", msg)
			}
			if strings.Contains(msg, "\n") {
				t.Errorf("error %q is not one line", msg)
			}
		})
	}
}

func TestVhost(t *testing.T) {
	for in, want := range map[string]string{
		"amqp://localhost/":       "/",
		"amqp://localhost":        "/",
		"amqp://localhost/prod":   "prod",
		"amqp://localhost/%2fapp": "/app",
		"not a url":               "/",
	} {
		if got := Vhost(in); got != want {
			t.Errorf("Vhost(%q) = %q, want %q", in, got, want)
		}
	}
}
