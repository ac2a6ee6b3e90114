package cli

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// TestConfigFileExitStatuses: a config file named with --config must exist;
// the default path may be absent. Every mistake in the configuration (a
// missing named file, an unknown key, a bad value, an unknown context) is
// one kind of mistake: one line, exit 2. Nothing is dialled.
func TestConfigFileExitStatuses(t *testing.T) {
	// The default path ($XDG_CONFIG_HOME/parkinglot/config.yaml) is absent.
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	dir := t.TempDir()
	missing := filepath.Join(dir, "nope", "config.yaml")
	file := func(name, text string) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := writeFile(p, text); err != nil {
			t.Fatal(err)
		}
		return p
	}
	badKey := file("bad-key.yaml", "contexts:\n  prod:\n    colour: red\n")
	badRate := file("bad-rate.yaml", "parking_lots:\n  q: {rate: fast}\n")
	good := file("good.yaml", "contexts:\n  prod: {url: \"amqp://h1:5672/\"}\n")
	for _, tc := range []struct {
		name string
		args []string
		code int
		err  string
	}{
		{"a named file that does not exist", []string{"--config", missing, "alert-rules"}, ExitUsage, "config file " + missing + " does not exist"},
		{"the default path absent", []string{"alert-rules"}, ExitOK, ""},
		{"an unknown key", []string{"--config", badKey, "alert-rules"}, ExitUsage, `line 3: unknown key "colour" in a context`},
		{"a bad value", []string{"--config", badRate, "alert-rules"}, ExitUsage, `"fast" is not a number`},
		{"an unknown context", []string{"--config", good, "--context", "staging", "alert-rules"}, ExitUsage, `no context "staging" in the config (known: prod)`},
		{"a named file that exists", []string{"--config", good, "alert-rules"}, ExitOK, ""},
		{"--config \"\": no file", []string{"--config", "", "alert-rules"}, ExitOK, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, b := testFactory(t)
			code := run(context.Background(), f, tc.args)
			stderr := b.err.String()
			if code != tc.code {
				t.Fatalf("exit %d, want %d; stderr %q", code, tc.code, stderr)
			}
			if tc.err == "" {
				return
			}
			if !strings.Contains(stderr, tc.err) {
				t.Errorf("stderr %q, want %q", stderr, tc.err)
			}
			if n := strings.Count(strings.TrimSpace(stderr), "\n"); n != 0 {
				t.Errorf("stderr has %d lines, want one: %q", n+1, stderr)
			}
		})
	}
}

// `parkinglot config` masks a password whatever it holds (white space, "@",
// "#", "?", "/"), in the text and the JSON output, for a context's url and
// management_url (one URL or a list) and for the flags.
func TestConfigRedactsAnyPassword(t *testing.T) {
	const secret = "Pw-9f2c"
	for _, tc := range []struct {
		name, pw string // pw as YAML double-quoted text; holds secret
	}{
		{"space", "S3cr3t " + secret},
		{"tab", `S3cr3t\t` + secret},
		{"newline", `S3cr3t\n` + secret},
		{"@", "S3cr3t@" + secret},
		{"# ? /", "S3cr3t#?/" + secret},
		{"@, space and #", "a@b c#" + secret},
	} {
		for _, shape := range []struct {
			name, config string
			want         []string // lines of the text output
		}{
			{"context url", "current_context: p\ncontexts:\n  p: {url: \"amqp://guest:" + tc.pw + "@127.0.0.1:5674/\"}\n",
				[]string{"amqp://guest:xxxxx@127.0.0.1:5674/  (context p url)"}},
			{"context url list", "current_context: p\ncontexts:\n  p:\n    url: [\"amqp://a:b@h1:5672/\", \"amqp://guest:" + tc.pw + "@h2:5672/\"]\n",
				[]string{"amqp://a:xxxxx@h1:5672/,amqp://guest:xxxxx@h2:5672/  (context p url)"}},
			{"context management_url", "current_context: p\ncontexts:\n  p: {url: 'amqp://h1/', management_url: \"http://ops:" + tc.pw + "@m:15672\"}\n",
				[]string{"http://ops:xxxxx@m:15672  (context p management_url)"}},
			{"context management_url list", "current_context: p\ncontexts:\n  p:\n    url: 'amqp://h1/'\n    management_url: [\"http://ops:" + tc.pw + "@m1:15672\", \"http://ops:x@m2:15672\"]\n",
				[]string{"http://ops:xxxxx@m1:15672,http://ops:xxxxx@m2:15672  (context p management_url)"}},
		} {
			t.Run(tc.name+"/"+shape.name, func(t *testing.T) {
				f, b, _ := secretFactory(t, shape.config, nil)
				if code := runConfig(f, []string{"config"}); code != 0 {
					t.Fatalf("exit %d: %q", code, b.err.String())
				}
				out := b.out.String()
				for _, want := range shape.want {
					if !strings.Contains(out, want) {
						t.Errorf("config output lacks %q:\n%s", want, out)
					}
				}
				f, b2, _ := secretFactory(t, shape.config, nil)
				if code := runConfig(f, []string{"config", "-o", "json"}); code != 0 {
					t.Fatalf("config -o json: exit %d: %q", code, b2.err.String())
				}
				all := out + b.err.String() + b2.out.String() + b2.err.String()
				if strings.Contains(all, secret) || strings.Contains(all, "S3cr3t") {
					t.Errorf("config shows the password:\n%s", all)
				}
			})
		}
	}
	// The flags, with characters YAML would not carry.
	for _, pw := range []string{"S3cr3t " + secret, "S3cr3t\t" + secret, "S3cr3t\n" + secret, "S3cr3t\xff" + secret} {
		f, b := testFactory(t)
		code := run(context.Background(), f, []string{"--config", "", "--url", "amqp://guest:" + pw + "@127.0.0.1:5674/",
			"--management-url", "http://ops:" + pw + "@m:15672", "config", "-o", "json"})
		if code != 0 {
			t.Fatalf("%q: exit %d: %q", pw, code, b.err.String())
		}
		if out := b.out.String() + b.err.String(); strings.Contains(out, secret) || strings.Contains(out, "S3cr3t") ||
			!strings.Contains(out, `"url":"amqp://guest:xxxxx@127.0.0.1:5674/"`) || !strings.Contains(out, `"management_url":"http://ops:xxxxx@m:15672"`) {
			t.Errorf("%q: config -o json:\n%s", pw, out)
		}
	}
}
