// Package cli is parkinglot's command line: one file per command (an
// options struct, NewCmdX and xRun), sharing one Factory. The commands turn
// flags into the engine's options (package replay, retrycore), call it once
// and print the outcome; every word about flags is here, not in the engine.
package cli

import (
	"context"
	"log/slog"
	"os"
	"time"

	"github.com/parkinglot/parkinglot/broker/body"
	"github.com/parkinglot/parkinglot/replay"
	"github.com/parkinglot/parkinglot/ui/iostreams"
)

// Factory is what every command shares: the streams, the global flags'
// values, the resolved config and connection, a logger and a lazy session
// (so --help never dials a broker). The root command fills it before a
// command runs.
type Factory struct {
	IOStreams *iostreams.IOStreams
	Version   string
	// Getenv reads the environment (os.Getenv; tests give their own).
	Getenv func(string) string

	// Global flags.
	Output     string // -o: text or json
	LogLevel   string
	LogFormat  string // text or json
	ConfigPath string
	// ConfigNamed: --config was given, so its file must exist.
	ConfigNamed bool
	ConnFlags   ConnectionFlags
	DecodeFlags replay.DecodeFlags

	// NoSecrets: the command reads no password source (`config` says
	// where they are without running them).
	NoSecrets bool
	// PasswordTimeout bounds a context's password_command (0: the default).
	PasswordTimeout time.Duration

	// Resolved by the root before a command runs.
	Config replay.Config
	Conn   replay.Connection
	Log    *slog.Logger
	// Bodies reads message bodies with the schemas of the config's
	// decode and the flags (nil: by their properties alone).
	Bodies *body.Reader

	// OpenSession opens a session named for the command; nil is
	// replay.Open on Conn and Config. Tests give a fake.
	OpenSession func(ctx context.Context, name string) (Session, error)
}

// NewFactory is a factory on streams with the process's environment.
func NewFactory(streams *iostreams.IOStreams) *Factory {
	return &Factory{IOStreams: streams, Version: "dev", Getenv: os.Getenv, Output: "text", LogLevel: "info", LogFormat: logText,
		Log: slog.New(slog.DiscardHandler)}
}

// JSON reports whether -o json was given.
func (f *Factory) JSON() bool { return f.Output == "json" }

// Session opens a replay session named for the command (or
// $PARKINGLOT_CONNECTION_NAME, so tests can find and close its
// connections), and refuses a management API of another cluster than the
// connection's (management.go). Nothing dials before a command asks for it.
func (f *Factory) Session(ctx context.Context, what string) (Session, error) {
	name := f.Getenv("PARKINGLOT_CONNECTION_NAME")
	if name == "" {
		name = "parkinglot " + what
	}
	if f.OpenSession != nil {
		return f.OpenSession(ctx, name)
	}
	s, err := replay.Open(ctx, f.Conn, f.Config, name, f.Log)
	if err != nil {
		return nil, err
	}
	s.Bodies = f.Bodies
	// Refused before the command shows or changes anything; the check's
	// one request is the management probe the command makes anyway, kept
	// for the session.
	if err := s.CheckManagement(ctx); err != nil {
		_ = s.Close()
		return nil, refuseMismatch(err)
	}
	return s, nil
}

// newLogger is a logger on the error stream, in --log-format, that keeps
// passwords out of every line (logformat.go).
func (f *Factory) newLogger(level slog.Level) *slog.Logger {
	return slog.New(logHandler(f.LogFormat, f.IOStreams.ErrOut, level))
}
