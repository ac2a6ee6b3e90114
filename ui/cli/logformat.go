package cli

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/parkinglot/parkinglot/broker"
)

// Log lines: on stderr, as text (key=value) or, with
// --log-format json, one JSON object a line from slog's JSON handler. The
// keys are stable: time, level, msg, then the record's own (url, queue,
// id, attempt, err, …); URLs are redacted and durations are Go duration
// text ("1.5s") in both formats. With json, the lines the command line
// itself says on stderr (notices, the final error) are records too, so
// that every stderr line parses.

// Log formats.
const (
	logText = "text"
	logJSON = "json"
)

// logHandler is the handler of the format on w.
func logHandler(format string, w io.Writer, level slog.Leveler) slog.Handler {
	opts := &slog.HandlerOptions{Level: level, ReplaceAttr: redactAttr}
	if format == logJSON {
		return slog.NewJSONHandler(w, opts)
	}
	return slog.NewTextHandler(w, opts)
}

// redactAttr keeps passwords out of every log line, and writes durations
// as text in either format.
func redactAttr(_ []string, at slog.Attr) slog.Attr {
	switch v := at.Value.Any().(type) {
	case string:
		return slog.String(at.Key, broker.RedactText(v))
	case error:
		return slog.String(at.Key, broker.RedactText(v.Error()))
	case time.Duration:
		return slog.String(at.Key, v.String())
	}
	return at
}

// say writes one line the command line says on stderr ("parkinglot: "
// and text): a plain line, or with --log-format json a record of level.
func (f *Factory) say(level slog.Level, text string, attrs ...slog.Attr) {
	if f.LogFormat != logJSON {
		f.IOStreams.ErrOut.Write([]byte("parkinglot: " + broker.RedactText(text) + "\n"))
		return
	}
	// Every level: such a line is said whatever --log-level is.
	h := logHandler(logJSON, f.IOStreams.ErrOut, slog.LevelDebug)
	slog.New(h).LogAttrs(context.Background(), level, text, attrs...)
}

// handlerOutput is where the exec handler's stdout goes: the error stream
// as it is, or with --log-format json one record a line ("handler
// output", key line), so that every stderr line parses. flush logs an
// unfinished last line.
func (f *Factory) handlerOutput() (w io.Writer, flush func()) {
	if f.LogFormat != logJSON {
		return f.IOStreams.ErrOut, func() {}
	}
	l := &logLines{log: f.Log}
	return l, l.flush
}

// logLines logs each line written to it.
type logLines struct {
	mu  sync.Mutex
	buf []byte
	log *slog.Logger
}

func (l *logLines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, p...)
	for {
		i := bytes.IndexByte(l.buf, '\n')
		if i < 0 {
			break
		}
		l.log.Info("handler output", "line", strings.TrimSuffix(string(l.buf[:i]), "\r"))
		l.buf = l.buf[i+1:]
	}
	return len(p), nil
}

func (l *logLines) flush() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.buf) > 0 {
		l.log.Info("handler output", "line", string(l.buf))
		l.buf = nil
	}
}
