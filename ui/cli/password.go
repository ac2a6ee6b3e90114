package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/replay"
	"github.com/parkinglot/parkinglot/retrycore"
)

// Passwords out of plain text (config files get shared): a URL that names a
// user but no password takes it from, in this order, the file
// $PARKINGLOT_PASSWORD_FILE, the active context's password_file, or the
// first line its password_command prints. A password written in the URL
// (--url, PARKINGLOT_URL or the context's url) wins. The secret goes into
// the connection's URLs and nowhere else: errors about it never quote it
// nor what the command printed.

// passwordFileEnv is the *_FILE convention of container secrets.
const passwordFileEnv = "PARKINGLOT_PASSWORD_FILE"

// DefaultPasswordTimeout bounds a context's password_command.
const DefaultPasswordTimeout = 30 * time.Second

// passwordSource is where a URL without a password takes it from.
type passwordSource struct {
	kind    string // "env", "file" or "command"
	context string // the context that names it ("" for the environment)
	path    string // env and file
	argv    []string
}

// String names the source for people, without the secret: "PARKINGLOT_PASSWORD_FILE
// (/run/secrets/rabbit)", "password_file /p of context prod",
// "password_command pass… of context prod".
func (s *passwordSource) String() string {
	switch s.kind {
	case "env":
		return passwordFileEnv + " " + s.path
	case "file":
		return "password_file " + s.path + " of context " + s.context
	}
	cmd := s.argv[0]
	if len(s.argv) > 1 {
		cmd += " …"
	}
	return "password_command " + cmd + " of context " + s.context
}

// passwordSource is the source in force, or nil.
func (f *Factory) passwordSource() *passwordSource {
	if p := f.Getenv(passwordFileEnv); p != "" {
		return &passwordSource{kind: "env", path: p}
	}
	name := f.Conn.Context
	c, ok := f.Config.Contexts[name]
	if name == "" || !ok {
		return nil
	}
	switch {
	case c.PasswordFile != "":
		return &passwordSource{kind: "file", context: name, path: configRelative(f.ConfigPath, c.PasswordFile)}
	case len(c.PasswordCommand) > 0:
		return &passwordSource{kind: "command", context: name, argv: c.PasswordCommand}
	}
	return nil
}

// configRelative reads a context's path relative to the config file's
// folder, and ~/ as the home folder.
func configRelative(configPath, p string) string {
	if rest, ok := strings.CutPrefix(p, "~/"); ok {
		if home, err := os.UserHomeDir(); err == nil {
			return filepath.Join(home, rest)
		}
	}
	if filepath.IsAbs(p) || configPath == "" {
		return p
	}
	return filepath.Join(filepath.Dir(configPath), p)
}

// PasswordError is a password source that could not give a password: one
// line that names the source, never the secret nor the command's output.
// A usage error (exit 2): the configuration does not work as written.
type PasswordError struct {
	Source string
	Reason string
}

func (e *PasswordError) Error() string { return e.Source + ": " + e.Reason }

// read is the password: the file's or the command's first line.
func (s *passwordSource) read(ctx context.Context, timeout time.Duration) (string, error) {
	fail := func(format string, args ...any) error {
		return &UsageError{&PasswordError{Source: s.String(), Reason: fmt.Sprintf(format, args...)}}
	}
	var out []byte
	if s.kind != "command" {
		b, err := os.ReadFile(s.path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return "", fail("no such file")
		case errors.Is(err, fs.ErrPermission):
			return "", fail("permission denied")
		case err != nil:
			return "", fail("cannot be read")
		}
		out = b
	} else {
		if timeout <= 0 {
			timeout = DefaultPasswordTimeout
		}
		cctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		cmd := exec.CommandContext(cctx, s.argv[0], s.argv[1:]...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		cmd.WaitDelay = time.Second
		err := cmd.Run()
		out = stdout.Bytes()
		var ee *exec.ExitError
		switch {
		case cctx.Err() != nil && ctx.Err() == nil:
			return "", fail("no answer within %s", timeout)
		case ctx.Err() != nil:
			return "", ctx.Err()
		case errors.Is(err, exec.ErrNotFound), errors.Is(err, fs.ErrNotExist):
			return "", fail("%s: command not found", s.argv[0])
		case errors.As(err, &ee):
			return "", fail("exited %d%s", ee.ExitCode(), stderrLine(stderr.Bytes(), out))
		case err != nil:
			return "", fail("%s cannot be run", s.argv[0])
		}
	}
	line, _, _ := strings.Cut(string(out), "\n")
	line = strings.TrimSuffix(line, "\r")
	if line == "" {
		if s.kind == "command" {
			return "", fail("printed no password")
		}
		return "", fail("is empty")
	}
	return line, nil
}

// stderrLine is ": " and the first line the command wrote on stderr, for
// its failure — cleaned, bounded, without anything it printed on stdout.
func stderrLine(stderr, stdout []byte) string {
	line, _, _ := strings.Cut(strings.TrimSpace(string(stderr)), "\n")
	for _, s := range strings.Split(string(stdout), "\n") {
		if s = strings.TrimSpace(s); s != "" {
			line = strings.ReplaceAll(line, s, "xxxxx")
		}
	}
	line = strings.Join(strings.Fields(retrycore.StripControl(broker.RedactText(line))), " ")
	if line == "" {
		return ""
	}
	if r := []rune(line); len(r) > 160 {
		line = string(r[:160]) + "…"
	}
	return ": " + line
}

// userinfo splits an URL at its user information: the part before it, the
// user (still escaped), whether it has a password, and the part after the
// "@". ok is false when the URL names no user.
func userinfo(raw string) (scheme, user string, hasPassword bool, rest string, ok bool) {
	i := strings.Index(raw, "://")
	if i < 0 {
		return "", "", false, raw, false
	}
	after := raw[i+3:]
	hostEnd := strings.IndexAny(after, "/?#")
	if hostEnd < 0 {
		hostEnd = len(after)
	}
	at := strings.LastIndex(after[:hostEnd], "@")
	if at < 0 {
		return raw[:i+3], "", false, after, false
	}
	user, _, hasPassword = strings.Cut(after[:at], ":")
	return raw[:i+3], user, hasPassword, after[at+1:], true
}

// urlsNeedPassword reports whether some URL of a list names a user and no
// password, and whether some names no user at all.
func urlsNeedPassword(raw string) (need, noUser bool) {
	for _, u := range broker.SplitURLs(raw) {
		_, _, hasPassword, _, ok := userinfo(u)
		switch {
		case !ok:
			noUser = true
		case !hasPassword:
			need = true
		}
	}
	return need, noUser
}

// withPassword puts password into every URL of a list that names a user
// and no password.
func withPassword(raw, password string) string {
	urls := broker.SplitURLs(raw)
	for i, u := range urls {
		scheme, user, hasPassword, rest, ok := userinfo(u)
		if !ok || hasPassword {
			continue
		}
		name, err := url.PathUnescape(user)
		if err != nil {
			name = user
		}
		urls[i] = scheme + url.UserPassword(name, password).String() + "@" + rest
	}
	return strings.Join(urls, ",")
}

// fillPasswords gives the connection's URLs that name a user and no
// password the password of the source in force. Without a source they stay
// as they are, and a dial refuses them (broker.NoPasswordError) rather than
// send amqp091-go's default "guest"; commands that dial nothing still run.
// A source with a URL that names no user is refused (the password would go
// to no one).
func (f *Factory) fillPasswords(ctx context.Context) error {
	src := f.passwordSource()
	if src == nil {
		return nil
	}
	need, noUser := urlsNeedPassword(f.Conn.URL)
	var mNeed, mNoUser bool
	if !f.Conn.ManagementAssumed {
		mNeed, mNoUser = urlsNeedPassword(f.Conn.ManagementURL)
	}
	if !need && !mNeed {
		if noUser {
			return usagef("%s gives a password, but the URL %s names no user: write amqp://USER@host…", src, broker.Redact(f.Conn.URL))
		}
		if mNoUser {
			return usagef("%s gives a password, but the management URL %s names no user: write http://USER@host…", src, broker.Redact(f.Conn.ManagementURL))
		}
		return nil
	}
	pw, err := src.read(ctx, f.PasswordTimeout)
	if err != nil {
		return err
	}
	f.Conn.URL = withPassword(f.Conn.URL, pw)
	if f.Conn.ManagementAssumed {
		f.Conn.ManagementURL = broker.ManagementURL(f.Conn.URL)
	} else {
		f.Conn.ManagementURL = withPassword(f.Conn.ManagementURL, pw)
	}
	return nil
}

// clearTextWarning is the one-line warning for a config file that holds a
// password in clear text and that others can read, or "".
func clearTextWarning(path string, cfg replay.Config) string {
	if path == "" {
		return ""
	}
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm()&0o044 == 0 {
		return ""
	}
	for _, c := range cfg.Contexts {
		for _, raw := range []string{string(c.URL), string(c.ManagementURL)} {
			for _, u := range broker.SplitURLs(raw) {
				if _, _, hasPassword, _, ok := userinfo(u); ok && hasPassword {
					return fmt.Sprintf("warning: %s holds a password in clear text and others can read it (mode %04o): chmod 600 it, or use password_file or password_command", path, st.Mode().Perm())
				}
			}
		}
	}
	return ""
}
