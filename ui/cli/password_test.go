package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestWithPassword(t *testing.T) {
	for _, tc := range []struct{ raw, want string }{
		{"amqp://app@h1:5672/v", "amqp://app:p%40ss%2Fw@h1:5672/v"},
		{"amqp://app@h1:5672/,amqps://app@h2:5671/", "amqp://app:p%40ss%2Fw@h1:5672/,amqps://app:p%40ss%2Fw@h2:5671/"},
		{"amqp://app:own@h1/", "amqp://app:own@h1/"},
		{"amqp://h1:5672/", "amqp://h1:5672/"},
		{"http://a%40b@h:15672", "http://a%40b:p%40ss%2Fw@h:15672"},
		{"amqp://h1/v@x", "amqp://h1/v@x"}, // an "@" in the vhost is no user
	} {
		if got := withPassword(tc.raw, "p@ss/w"); got != tc.want {
			t.Errorf("withPassword(%q) = %q, want %q", tc.raw, got, tc.want)
		}
	}
	for _, tc := range []struct {
		raw          string
		need, noUser bool
	}{
		{"amqp://app@h/", true, false},
		{"amqp://app:x@h/", false, false},
		{"amqp://h/", false, true},
		{"amqp://app@h1/,amqp://h2/", true, true},
	} {
		if need, noUser := urlsNeedPassword(tc.raw); need != tc.need || noUser != tc.noUser {
			t.Errorf("urlsNeedPassword(%q) = %v %v", tc.raw, need, noUser)
		}
	}
}

// secretFactory is a test factory with a config file of contexts; the
// environment is env.
func secretFactory(t *testing.T, config string, env map[string]string) (*Factory, *iostreamsBuffers, string) {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(path, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	f, b := testFactory(t)
	f.ConfigPath = path
	f.Getenv = func(k string) string { return env[k] }
	f.PasswordTimeout = 2 * time.Second
	return f, b, dir
}

// Each password source gives a URL that names a user and no password its
// password; a password in the URL wins; no source leaves the URL as it is.
func TestPasswordSources(t *testing.T) {
	secret := "s3cret-" + strings.Repeat("q", 8)
	dir := t.TempDir()
	file := filepath.Join(dir, "pw")
	if err := os.WriteFile(file, []byte(secret+"\nsecond line\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "rel"), []byte(secret+"\r\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, config string
		env          map[string]string
		args         []string
		url, mgmt    string
		from         string
	}{
		{"PARKINGLOT_PASSWORD_FILE", "", map[string]string{"PARKINGLOT_PASSWORD_FILE": file, "PARKINGLOT_URL": "amqp://app@h1:5672/"}, nil,
			"amqp://app:" + secret + "@h1:5672/", "http://app:" + secret + "@h1:15672", "PARKINGLOT_PASSWORD_FILE " + file},
		{"password_file", "current_context: p\ncontexts:\n  p: {url: 'amqp://app@h1:5672/', password_file: " + file + "}\n", nil, nil,
			"amqp://app:" + secret + "@h1:5672/", "http://app:" + secret + "@h1:15672", "password_file " + file + " of context p"},
		{"password_command as a string", "current_context: p\ncontexts:\n  p: {url: 'amqp://app@h1:5672/', password_command: 'cat " + file + "'}\n", nil, nil,
			"amqp://app:" + secret + "@h1:5672/", "http://app:" + secret + "@h1:15672", "password_command cat … of context p"},
		{"password_command as a list, explicit management URL", "contexts:\n  p:\n    url: 'amqp://app@h1:5672/'\n    management_url: 'https://ops@m:443'\n    password_command: [sh, -c, 'cat \"$0\"', " + file + "]\n", nil, []string{"--context", "p"},
			"amqp://app:" + secret + "@h1:5672/", "https://ops:" + secret + "@m:443", "password_command sh … of context p"},
		{"the environment's file over the context's command", "current_context: p\ncontexts:\n  p: {url: 'amqp://app@h1:5672/', password_command: 'false'}\n", map[string]string{"PARKINGLOT_PASSWORD_FILE": file}, nil,
			"amqp://app:" + secret + "@h1:5672/", "http://app:" + secret + "@h1:15672", "PARKINGLOT_PASSWORD_FILE " + file},
		{"a password in the URL wins", "current_context: p\ncontexts:\n  p: {url: 'amqp://app:inurl@h1:5672/', password_command: 'false'}\n", nil, nil,
			"amqp://app:inurl@h1:5672/", "http://app:inurl@h1:15672", "written in the URL (context p url)"},
		{"a relative password_file is the config folder's", "current_context: p\ncontexts:\n  p: {url: 'amqp://app@h1:5672/', password_file: rel}\n", nil, nil,
			"amqp://app:" + secret + "@h1:5672/", "http://app:" + secret + "@h1:15672", ""},
		{"no source", "", map[string]string{"PARKINGLOT_URL": "amqp://app@h1:5672/"}, nil,
			"amqp://app@h1:5672/", "http://app:guest@h1:15672", "none: the URL names a user and no password"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, b, cdir := secretFactory(t, tc.config, tc.env)
			if tc.name == "a relative password_file is the config folder's" {
				if err := os.WriteFile(filepath.Join(cdir, "rel"), []byte(secret+"\r\n"), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			path := f.ConfigPath
			root := NewCmdRoot(f)
			root.SetArgs(append(append([]string{"--config", path}, tc.args...), "alert-rules"))
			root.SetOut(f.IOStreams.Out)
			root.SetErr(f.IOStreams.ErrOut)
			if err := root.ExecuteContext(context.Background()); err != nil {
				t.Fatalf("%v; stderr %q", err, b.err.String())
			}
			if f.Conn.URL != tc.url || f.Conn.ManagementURL != tc.mgmt {
				t.Errorf("url %q management %q; want %q %q", f.Conn.URL, f.Conn.ManagementURL, tc.url, tc.mgmt)
			}
			if strings.Contains(b.err.String(), secret) {
				t.Errorf("stderr shows the secret: %q", b.err.String())
			}
			// `config` names the source without reading it.
			f2, b2, _ := secretFactory(t, tc.config, tc.env)
			f2.ConfigPath = f.ConfigPath
			if code := runConfig(f2, append(append([]string{}, tc.args...), "config", "-o", "json")); code != 0 {
				t.Fatalf("config: exit %d %q", code, b2.err.String())
			}
			var v ConfigView
			if err := json.Unmarshal([]byte(b2.out.String()), &v); err != nil {
				t.Fatalf("config -o json: %v %q", err, b2.out.String())
			}
			if tc.from != "" && !strings.HasPrefix(v.PasswordFrom, tc.from) {
				t.Errorf("password_from %q, want %q", v.PasswordFrom, tc.from)
			}
			if strings.Contains(b2.out.String()+b2.err.String(), secret) || strings.Contains(b2.out.String(), "inurl") {
				t.Errorf("config shows a secret: %q", b2.out.String())
			}
		})
	}
}

// A password source that cannot give a password stops the command at
// start with one line (exit 2) that names the source and never shows the
// secret nor what the command printed.
func TestPasswordSourceFailures(t *testing.T) {
	secret := "leak-" + strings.Repeat("z", 10)
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx := func(extra string) string {
		return "current_context: p\ncontexts:\n  p: {url: 'amqp://app@h1:5672/', " + extra + "}\n"
	}
	for _, tc := range []struct {
		name, config string
		env          map[string]string
		err          string
	}{
		{"a missing file", "", map[string]string{"PARKINGLOT_PASSWORD_FILE": filepath.Join(dir, "nope"), "PARKINGLOT_URL": "amqp://app@h/"}, "PARKINGLOT_PASSWORD_FILE " + filepath.Join(dir, "nope") + ": no such file"},
		{"an empty file", ctx("password_file: " + empty), nil, "password_file " + empty + " of context p: is empty"},
		{"a command that fails after printing", ctx(`password_command: [sh, -c, 'echo ` + secret + `; echo "no key for ` + secret + `" >&2; exit 3']`), nil, "password_command sh … of context p: exited 3: no key for xxxxx"},
		{"a command not found", ctx("password_command: /nonexistent/pass show x"), nil, "password_command /nonexistent/pass … of context p: /nonexistent/pass: command not found"},
		{"a command that prints nothing", ctx("password_command: 'true'"), nil, "password_command true of context p: printed no password"},
		{"a command that hangs", ctx("password_command: [sleep, '30']"), nil, "password_command sleep … of context p: no answer within 2s"},
		{"a URL that names no user", "", map[string]string{"PARKINGLOT_PASSWORD_FILE": empty, "PARKINGLOT_URL": "amqp://h1:5672/"}, "PARKINGLOT_PASSWORD_FILE " + empty + " gives a password, but the URL amqp://h1:5672/ names no user"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, b, _ := secretFactory(t, tc.config, tc.env)
			start := time.Now()
			code := runConfig(f, []string{"alert-rules"})
			stderr := b.err.String()
			if code != ExitUsage || !strings.Contains(stderr, tc.err) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
				t.Errorf("exit %d, stderr %q; want exit 2 and one line with %q", code, stderr, tc.err)
			}
			if strings.Contains(stderr+b.out.String(), secret) {
				t.Errorf("the output shows the secret: %q", stderr)
			}
			if time.Since(start) > 10*time.Second {
				t.Errorf("took %v", time.Since(start))
			}
		})
	}
}

// A config file with a clear-text password that others can read gets one
// warning line; mode 600, or no password in it, none.
func TestClearTextPasswordWarning(t *testing.T) {
	for _, tc := range []struct {
		mode   os.FileMode
		config string
		warn   bool
	}{
		{0o644, "contexts:\n  p: {url: 'amqp://app:pw@h/'}\n", true},
		{0o640, "contexts:\n  p: {management_url: ['http://h1:15672', 'http://app:pw@h2:15672']}\n", true},
		{0o600, "contexts:\n  p: {url: 'amqp://app:pw@h/'}\n", false},
		{0o644, "contexts:\n  p: {url: 'amqp://app@h/', password_file: /x}\n", false},
	} {
		f, b, _ := secretFactory(t, tc.config, nil)
		if err := os.Chmod(f.ConfigPath, tc.mode); err != nil {
			t.Fatal(err)
		}
		if code := runConfig(f, []string{"alert-rules"}); code != 0 {
			t.Fatalf("exit %d: %q", code, b.err.String())
		}
		stderr := b.err.String()
		want := "parkinglot: warning: " + f.ConfigPath + " holds a password in clear text and others can read it"
		if got := strings.Contains(stderr, want); got != tc.warn || strings.Count(stderr, "\n") > 1 || strings.Contains(stderr, ":pw@") {
			t.Errorf("mode %o %q: stderr %q, want warning %v", tc.mode, tc.config, stderr, tc.warn)
		}
	}
}

// `parkinglot config` says which context is active and where each value
// comes from, redacted, without reading a password.
func TestConfigShowsSources(t *testing.T) {
	config := "current_context: prod\ncontexts:\n  prod:\n    url: 'amqp://app@h1:5672/'\n    password_command: 'pass show rabbit/prod'\n    tls: {ca: /etc/ca.pem}\n  dev: {url: 'amqp://dev:devpw@localhost:5672/'}\n"
	f, b, _ := secretFactory(t, config, map[string]string{"PARKINGLOT_MANAGEMENT_URL": "http://ops:mgmtpw@m:15672"})
	if code := runConfig(f, []string{"config", "--tls-cert", "/c.pem"}); code != 0 {
		t.Fatalf("exit %d: %q", code, b.err.String())
	}
	out := b.out.String()
	for _, want := range []string{
		"context              prod  (current_context)",
		"url                  amqp://app@h1:5672/  (context prod url)",
		"password             password_command pass … of context prod",
		"management url       http://ops:xxxxx@m:15672  (PARKINGLOT_MANAGEMENT_URL)",
		"management password  written in the URL (PARKINGLOT_MANAGEMENT_URL)",
		"tls ca               /etc/ca.pem  (context prod tls)",
		"tls cert             /c.pem  (--tls-cert)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("config output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "mgmtpw") || strings.Contains(out, "devpw") {
		t.Errorf("config shows a password:\n%s", out)
	}
	f, b, _ = secretFactory(t, config, nil)
	if code := runConfig(f, []string{"--context", "dev", "config"}); code != 0 {
		t.Fatalf("exit %d: %q", code, b.err.String())
	}
	if out := b.out.String(); !strings.Contains(out, "dev  (--context)") || !strings.Contains(out, "amqp://dev:xxxxx@localhost:5672/") ||
		!strings.Contains(out, "written in the URL (context dev url)") || strings.Contains(out, "devpw") {
		t.Errorf("config --context dev:\n%s", out)
	}
}

// runConfig runs args with the factory's config file.
func runConfig(f *Factory, args []string) int {
	return run(context.Background(), f, append([]string{"--config", f.ConfigPath}, args...))
}

// Help and shell completion print text and dial nothing: they run no
// password_command, so one that fails (or prompts) does not stop them, and
// a shell sourcing the completion does not run it at every start.
func TestHelpAndCompletionRunNoPasswordCommand(t *testing.T) {
	ran := filepath.Join(t.TempDir(), "ran")
	config := "current_context: p\ncontexts:\n  p: {url: 'amqp://app@h1:5672/', password_command: [sh, -c, 'touch \"$0\"; exit 1', " + ran + "]}\n"
	for _, args := range [][]string{{"help", "export"}, {"completion", "bash"}} {
		f, b, _ := secretFactory(t, config, nil)
		path := f.ConfigPath // the flag's default replaces it
		root := NewCmdRoot(f)
		root.SetArgs(append([]string{"--config", path}, args...))
		root.SetOut(f.IOStreams.Out)
		root.SetErr(f.IOStreams.ErrOut)
		if err := root.ExecuteContext(context.Background()); err != nil {
			t.Errorf("%v: %v; stderr %q", args, err, b.err.String())
		}
		if _, err := os.Stat(ran); err == nil {
			t.Fatalf("%v ran the password_command", args)
		}
	}
}
