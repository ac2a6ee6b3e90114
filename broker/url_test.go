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
		// An unescaped "#" after digits: net/url reads host "guest", port 12.
		{"raw hash in password", "amqp://guest:12#" + pw + "@localhost/", `a "#" ends the URL`},
		{"raw hash, port after", "amqp://guest:" + pw + "#x@localhost:5672/", "percent-encode @ : / ? #"},
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

// A password is masked whatever it holds: white space, "@", "#", "?", "/",
// "%" or bytes that are not UTF-8, alone or in one URL of a list.
func TestRedactPasswordWithAnyCharacter(t *testing.T) {
	const host = "@127.0.0.1:5674/"
	cases := []struct {
		name, pw string
	}{
		{"space", "S3cr3t Pw"},
		{"leading and trailing space", " S3cr3t Pw "},
		{"tab", "S3cr3t\tPw"},
		{"newline", "S3cr3t\nPw"},
		{"carriage return", "S3cr3t\r\nPw"},
		{"@", "S3cr3t@Pw"},
		{"@ and space", "S3cr3t@ Pw"},
		{"space then @", "S3cr3t Pw@x"},
		{"# ? /", "S3cr3t#?/Pw"},
		{"# ? / and space", "S3 cr3t#x?y/Pw"},
		{"%", "S3cr3t%Pw"},
		{"comma", "S3cr3t, Pw"},
		{"not UTF-8", "S3cr3t\xff\xfe Pw"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, tc := range []struct{ in, want string }{
				{"amqp://guest:" + c.pw + host, "amqp://guest:xxxxx" + host},
				{"http://guest:" + c.pw + "@m:15672", "http://guest:xxxxx@m:15672"},
				{"amqp://a:b@h1/,amqps://guest:" + c.pw + host + ",amqp://h3/", "amqp://a:xxxxx@h1/,amqps://guest:xxxxx" + host + ",amqp://h3/"},
				{"amqp://guest:" + c.pw + host + " , amqp://a:b@h2/", "amqp://guest:xxxxx" + host + " , amqp://a:xxxxx@h2/"},
				{"guest:" + c.pw + host, "guest:xxxxx" + host},
			} {
				got := Redact(tc.in)
				if got != tc.want {
					t.Errorf("Redact(%q) = %q, want %q", tc.in, got, tc.want)
				}
				if strings.Contains(got, "Pw") {
					t.Errorf("Redact(%q) = %q shows the password", tc.in, got)
				}
			}
		})
	}
}

// In free text a URL's password is masked through white space when the URL
// does not read well without it, and text after a URL that reads well is
// left alone.
func TestRedactTextPasswordWithWhiteSpace(t *testing.T) {
	cases := []struct {
		name, in, want string
	}{
		{"space", "dial amqp://guest:S3cr3t Pw@127.0.0.1:5674/ failed", "dial amqp://guest:xxxxx@127.0.0.1:5674/ failed"},
		{"tab", "url=amqp://guest:S3cr3t\tPw@h/ bad", "url=amqp://guest:xxxxx@h/ bad"},
		{"newline", "url=amqp://guest:S3cr3t\nPw@h/\nnext line", "url=amqp://guest:xxxxx@h/\nnext line"},
		{"several spaces and @", "amqp://u:a b c@d e@h/", "amqp://u:xxxxx@h/"},
		{"a space before an @", "amqp://u:S3cr3t@ Pw@h/", "amqp://u:xxxxx@h/"},
		{"quoted with %q", `bad broker URL "amqp://guest:S3cr3t Pw@x@127.0.0.1:5674/": contains white space`, `bad broker URL "amqp://guest:xxxxx@127.0.0.1:5674/": contains white space`},
		{"quoted, @ and space", `parse "amqp://u:a@b c@h/": bad`, `parse "amqp://u:xxxxx@h/": bad`},
		{"quoted, escaped quote", `parse "amqp://u:a\" b@h/": bad`, `parse "amqp://u:xxxxx@h/": bad`},
		{"quoted, escaped tab and newline", `parse "amqp://u:a\tb\nc@h/": bad`, `parse "amqp://u:xxxxx@h/": bad`},
		{"in a list", "connect amqp://a:one@h1/,amqp://b:S3cr3t Pw@h2/,amqp://c:two@h3/: refused", "connect amqp://a:xxxxx@h1/,amqp://b:xxxxx@h2/,amqp://c:xxxxx@h3/: refused"},
		{"quoted list", `connect "amqp://a:one@h1/,amqp://b:S3cr3t Pw@h2/": refused`, `connect "amqp://a:xxxxx@h1/,amqp://b:xxxxx@h2/": refused`},
		{"two URLs", "from amqp://a:S3 cr3t@h1/ to amqp://b:Pw x@h2/", "from amqp://a:xxxxx@h1/ to amqp://b:xxxxx@h2/"},
		// A URL that reads well ends at white space: what follows is text.
		{"text after a URL", "amqp://u:p@h/ failed, mail ops@example.com", "amqp://u:xxxxx@h/ failed, mail ops@example.com"},
		{"text after a URL without a password", "amqp://localhost:5672/ failed, mail ops@example.com", "amqp://localhost:5672/ failed, mail ops@example.com"},
		{"text after a URL in parentheses", "(amqp://u:p@h:5672) failed, mail ops@example.com", "(amqp://u:xxxxx@h:5672) failed, mail ops@example.com"},
		{"already redacted", `"amqp://guest:xxxxx@h/": contains white space`, `"amqp://guest:xxxxx@h/": contains white space`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := RedactText(c.in); got != c.want {
				t.Errorf("RedactText(%q) = %q, want %q", c.in, got, c.want)
			}
		})
	}
}

// ParseURL's and NewManagement's errors quote the URL without its password,
// whatever the password holds.
func TestURLErrorsHideAnyPassword(t *testing.T) {
	for _, pw := range []string{"S3cr3t Pw", "S3cr3t\tPw", "S3cr3t\nPw", "S3cr3t@Pw x", "S3cr3t#?/Pw", "S3cr3t%Pw", "S3cr3t\xffPw"} {
		for _, tc := range []struct {
			what string
			err  func() error
		}{
			{"ParseURL", func() error { _, err := ParseURL("amqp://guest:" + pw + "@127.0.0.1:5674/"); return err }},
			{"ParseURLs", func() error {
				_, _, err := ParseURLs("amqp://a:b@h1:5672/,amqp://guest:" + pw + "@127.0.0.1:5674/")
				return err
			}},
			{"NewManagement", func() error { _, err := NewManagement("http://guest:"+pw+"@127.0.0.1:15672", "/"); return err }},
			{"NewManagement list", func() error {
				_, err := NewManagement("http://a:b@h1:15672,http://guest:"+pw+"@127.0.0.1:15672", "/")
				return err
			}},
		} {
			err := tc.err()
			if err == nil {
				t.Errorf("%s(%q) accepted it", tc.what, pw)
				continue
			}
			if !errors.Is(err, ErrBadURL) {
				t.Errorf("%s(%q): %v does not wrap ErrBadURL", tc.what, pw, err)
			}
			if msg := err.Error(); strings.Contains(msg, "Pw") || strings.Contains(msg, "S3cr3t") {
				t.Errorf("%s(%q): %q shows the password", tc.what, pw, msg)
			}
		}
	}
}

// A user without a password is refused, never dialled: amqp091-go would
// send the password "guest". A password written empty is a password, and a
// URL without a user is the broker's default guest, as documented.
func TestParseURLRefusesAUserWithoutAPassword(t *testing.T) {
	for _, tc := range []struct {
		in, user string // user "": accepted
	}{
		{"amqp://ops@rabbit:5672/", "ops"},
		{"amqp://guest@localhost/", "guest"},
		{"amqps://o%40ps@rabbit/prod", "o@ps"},
		{"amqp://ops:@rabbit/", ""},
		{"amqp://rabbit/", ""},
	} {
		_, err := ParseURL(tc.in)
		if tc.user == "" {
			if err != nil {
				t.Errorf("ParseURL(%q): %v, want it accepted", tc.in, err)
			}
			continue
		}
		var npe *NoPasswordError
		if !errors.As(err, &npe) || npe.User != tc.user || !errors.Is(err, ErrBadURL) {
			t.Errorf("ParseURL(%q) = %v, want a NoPasswordError for %q wrapping ErrBadURL", tc.in, err, tc.user)
			continue
		}
		if want := `no password given for user "` + tc.user + `"`; !strings.Contains(err.Error(), want) {
			t.Errorf("ParseURL(%q): %q does not say %q", tc.in, err, want)
		}
	}
	_, _, err := ParseURLs("amqp://a:b@h1/,amqp://ops@h2/")
	var npe *NoPasswordError
	if !errors.As(err, &npe) || !strings.HasPrefix(err.Error(), "URL 2 of 2: ") {
		t.Errorf("ParseURLs: %v, want URL 2 of 2 refused for its missing password", err)
	}
}
