package retrycore

import "strings"

// GroupKey is the group of a decoded message: its error's GroupKey, or,
// when its headers carry a stack trace (Spring's x-exception-stacktrace,
// MassTransit's and NServiceBus's), the trace's key, its exception taken
// from ErrorType and Error where the trace names none.
func (f Facts) GroupKey() string {
	if f.StackTrace != "" {
		header := f.Error
		if f.ErrorType != "" && !strings.HasPrefix(f.Error, f.ErrorType) {
			header = f.ErrorType + ": " + f.Error
		}
		if k, ok := traceKey(f.StackTrace, header); ok {
			return k
		}
	}
	return GroupKey(f.Error)
}

// traceKey keys a stack trace by its exception (type and message, masked)
// and the frame of the user's code nearest to where it was thrown:
// "EXCEPTION at FRAME", without line numbers, which change with every
// release. Of a chain of exceptions (Java's "Caused by:", .NET's "--->",
// Python's chained tracebacks) it takes the innermost, the root cause: a
// framework's wrapper (Spring's ListenerExecutionFailedException) would
// put every failure in one group. A frame is the user's when it is not
// the runtime's, the standard library's or a known framework's (see
// libraryFrame); the innermost exception's frames are searched first,
// then those of the exceptions around it. header is the exception when
// the trace names none; ok is false when text holds no frame.
func traceKey(text, header string) (key string, ok bool) {
	var t trace
	switch traceFormat(text) {
	case formatPython:
		t = pythonTrace(text)
	case formatGo:
		t = goTrace(text)
	case formatAt:
		t = atTrace(text)
	default:
		return "", false
	}
	if t.header == "" {
		t.header = header
	}
	if t.header == "" && t.frame == "" {
		return "", false
	}
	key = lineKey(OneLine(t.header))
	if t.frame != "" {
		key = strings.TrimSpace(key + " at " + lineKey(t.frame))
	}
	return key, true
}

// trace is what a trace's key is made of.
type trace struct{ header, frame string }

const (
	formatNone = iota
	formatAt   // Java, .NET, Node: "at …" frames
	formatPython
	formatGo
)

func traceFormat(text string) int {
	format := formatNone
	for line := range strings.Lines(text) {
		t := strings.TrimSpace(line)
		switch {
		case t == "Traceback (most recent call last):":
			return formatPython
		case line[0] == '\t' && strings.Contains(t, ".go:"):
			format = formatGo
		case format == formatNone && isAtFrame(t):
			format = formatAt
		}
	}
	return format
}

// isAtFrame: "at com.acme.Ledger.debit(Ledger.java:42)", "at debit
// (/app/ledger.js:42:7)", "at /app/ledger.js:42:7", "at
// Acme.Ledger.Debit() in /src/Ledger.cs:line 42".
func isAtFrame(t string) bool {
	if !strings.HasPrefix(t, "at ") || len(t) < 4 {
		return false
	}
	r := t[3:]
	return strings.HasSuffix(r, ")") || strings.Contains(r, ":line ") || endsWithLineNumber(r)
}

func endsWithLineNumber(r string) bool {
	k := strings.LastIndexByte(r, ':')
	return k > 0 && allDigits(r[k+1:])
}

// atTrace reads a Java, .NET or Node trace: exceptions are sections, a
// cause ("Caused by:", "--->") one level deeper than the section it is
// in; Java's suppressed exceptions are passed over.
func atTrace(text string) trace {
	type section struct {
		header        string
		depth, parent int
		frame         string // the first user frame
	}
	var sections []section
	cur := -1
	open := func(header string) {
		depth := 0
		if cur >= 0 {
			depth = sections[cur].depth + 1
		}
		sections = append(sections, section{header: header, depth: depth, parent: cur})
		cur = len(sections) - 1
	}
	openAll := func(header string) {
		// .NET Framework writes inner exceptions on the outer one's line.
		for {
			h, inner, ok := strings.Cut(header, " ---> ")
			open(h)
			if !ok {
				return
			}
			header = inner
		}
	}
	suppressed := false
	for line := range strings.Lines(text) {
		t := strings.TrimSpace(line)
		if t == "" {
			continue
		}
		indented := line[0] == ' ' || line[0] == '\t'
		if suppressed && indented {
			continue
		}
		suppressed = false
		switch {
		case indented && strings.HasPrefix(t, "Suppressed: "):
			suppressed = true
		case isAtFrame(t):
			if cur < 0 {
				open("") // frames alone (MassTransit's stack header)
			}
			if sections[cur].frame == "" {
				if name, lib := atFrame(t[3:]); !lib {
					sections[cur].frame = name
				}
			}
		case strings.HasPrefix(t, "--- End of inner exception stack trace ---"):
			if cur >= 0 && sections[cur].parent >= 0 {
				cur = sections[cur].parent
			}
		case strings.HasPrefix(t, "... ") || strings.HasPrefix(t, "--- "):
			// "... 24 more", "--- End of stack trace from previous location ---"
		case !indented && strings.HasPrefix(t, "Caused by: "):
			openAll(t[len("Caused by: "):])
		case strings.HasPrefix(t, "---> "):
			openAll(t[len("---> "):])
		case cur < 0:
			openAll(exceptionLine(t))
		}
		// Other lines continue a message or dump an error's fields.
	}
	if len(sections) == 0 {
		return trace{}
	}
	root := 0
	for i, s := range sections {
		if s.depth >= sections[root].depth {
			root = i
		}
	}
	var tr trace
	for i := root; i >= 0 && (tr.header == "" || tr.frame == ""); i = sections[i].parent {
		if tr.header == "" {
			tr.header = sections[i].header
		}
		if tr.frame == "" {
			tr.frame = sections[i].frame
		}
	}
	return tr
}

// exceptionLine drops what precedes the exception on a trace's first line.
func exceptionLine(t string) string {
	if rest, ok := strings.CutPrefix(t, `Exception in thread "`); ok {
		if _, e, ok := strings.Cut(rest, `" `); ok {
			return e
		}
	}
	for _, p := range []string{"Unhandled exception. ", "Unhandled Exception: ", "Uncaught "} {
		if e, ok := strings.CutPrefix(t, p); ok {
			return e
		}
	}
	return t
}

// atFrame names an "at" frame (r follows "at ") without its line, and
// says whether it is the runtime's or a framework's.
func atFrame(r string) (name string, lib bool) {
	if k := strings.Index(r, ") in "); k >= 0 {
		r = r[:k+1] // .NET: the file follows
	}
	if k := strings.LastIndex(r, " ("); k >= 0 && strings.HasSuffix(r, ")") {
		// Node: "fn (location)"
		fn, loc := r[:k], r[k+2:len(r)-1]
		fn = strings.TrimPrefix(strings.TrimPrefix(fn, "async "), "new ")
		return fn + " (" + sourceFile(loc) + ")", nodeLibrary(loc)
	}
	k := strings.IndexByte(r, '(')
	if k < 0 {
		return sourceFile(r), nodeLibrary(r) // Node: an anonymous function's location
	}
	fn := r[:k]
	if m := strings.LastIndexByte(fn, '/'); m >= 0 {
		fn = fn[m+1:] // Java's module or class loader: "java.base/", "app//"
	}
	return fn, libraryFrame(fn)
}

// sourceFile is a location's file without its directory, line and column:
// "file:///app/src/ledger.js:42:7" → "ledger.js".
func sourceFile(loc string) string {
	for range 2 {
		if k := strings.LastIndexByte(loc, ':'); k >= 0 && allDigits(loc[k+1:]) {
			loc = loc[:k]
		}
	}
	if k := strings.LastIndexAny(loc, `/\`); k >= 0 {
		loc = loc[k+1:]
	}
	return loc
}

func nodeLibrary(loc string) bool {
	return strings.HasPrefix(loc, "node:") || strings.HasPrefix(loc, "internal/") || strings.HasPrefix(loc, "<") ||
		strings.Contains(loc, "node_modules") || !endsWithLineNumber(loc) // "native", "index 0"
}

// libraryPrefixes are the JVM's and .NET's runtimes and the frameworks a
// consumer's failure passes through on its way up.
var libraryPrefixes = []string{
	"java.", "javax.", "jdk.", "sun.", "com.sun.", "kotlin.", "kotlinx.", "scala.", "groovy.", "org.codehaus.groovy.",
	"org.springframework.", "org.apache.", "io.netty.", "com.rabbitmq.", "reactor.", "io.micrometer.", "org.hibernate.",
	"com.fasterxml.", "jakarta.", "org.junit.", "org.slf4j.", "ch.qos.logback.", "com.zaxxer.hikari.", "org.postgresql.",
	"com.mysql.", "io.opentelemetry.", "io.github.resilience4j.", "feign.", "okhttp3.", "io.grpc.", "akka.", "io.vertx.",
	"io.quarkus.", "io.micronaut.", "com.google.common.", "org.aspectj.",
	"System.", "Microsoft.", "MassTransit.", "NServiceBus.", "Rebus.", "RabbitMQ.", "Polly.", "Newtonsoft.", "Npgsql.",
	"StackExchange.", "Castle.", "Autofac.", "lambda_method",
}

// libraryFrame: fn (a JVM or .NET method) is a runtime's, a framework's or
// generated ("$$": CGLIB and ByteBuddy proxies).
func libraryFrame(fn string) bool {
	for _, p := range libraryPrefixes {
		if strings.HasPrefix(fn, p) {
			return true
		}
	}
	return strings.Contains(fn, "$$")
}

// pythonTrace reads a Python traceback; of chained ones ("The above
// exception was the direct cause…") the first is the root cause.
func pythonTrace(text string) trace {
	var tr trace
	blocks, header, frame := 0, "", ""
	for line := range strings.Lines(text) {
		t := strings.TrimSpace(line)
		switch {
		case t == "":
		case t == "Traceback (most recent call last):":
			if blocks > 0 && tr.frame == "" {
				tr.frame = frame
			}
			blocks++
			header, frame = "", ""
		case blocks == 0:
		case strings.HasPrefix(t, `File "`):
			if name, lib := pythonFrame(t); !lib {
				frame = name // the last is the innermost
			}
		case line[0] == ' ' || line[0] == '\t':
			// source lines, "^^^^" markers
		case header == "" && !strings.HasSuffix(t, "exception occurred:") && !strings.HasSuffix(t, "following exception:"):
			header = t
			if blocks == 1 {
				tr.header = header
			}
		}
	}
	if tr.frame == "" {
		tr.frame = frame
	}
	return tr
}

// pythonFrame names `File "/app/ledger.py", line 42, in debit` as
// "debit (ledger.py)".
func pythonFrame(t string) (name string, lib bool) {
	path, rest, ok := strings.Cut(t[len(`File "`):], `"`)
	if !ok {
		return "", true
	}
	_, fn, _ := strings.Cut(rest, ", in ")
	return fn + " (" + sourceFile(path) + ")", pythonLibrary(path)
}

// pythonFrameworks are packages a consumer's failure passes through; a
// package of site-packages not named here may be the application's own.
var pythonFrameworks = []string{
	"celery", "kombu", "amqp", "pika", "aio_pika", "aiormq", "billiard", "vine", "dramatiq", "nameko", "faust",
	"django", "flask", "werkzeug", "fastapi", "starlette", "uvicorn", "gunicorn", "aiohttp", "anyio", "sqlalchemy",
	"requests", "urllib3", "httpx", "httpcore", "tenacity", "pydantic", "pydantic_core", "psycopg2", "psycopg",
	"asyncpg", "redis", "botocore", "boto3", "grpc", "sentry_sdk", "opentelemetry", "ddtrace",
}

func pythonLibrary(path string) bool {
	if strings.HasPrefix(path, "<") {
		return true // <frozen importlib._bootstrap>, <string>
	}
	if strings.IndexByte(path, '\\') >= 0 {
		path = strings.ReplaceAll(path, `\`, "/")
	}
	for _, dir := range []string{"/site-packages/", "/dist-packages/"} {
		if _, pkg, ok := strings.Cut(path, dir); ok {
			pkg, _, _ = strings.Cut(pkg, "/")
			pkg = strings.TrimSuffix(pkg, ".py")
			for _, f := range pythonFrameworks {
				if pkg == f {
					return true
				}
			}
			return false
		}
	}
	return strings.Contains(path, "/lib/python") || strings.Contains(path, "/Lib/") // the standard library
}

// goTrace reads a Go panic or an error printed with its stack (a
// function's line, then its file's, indented by a tab).
func goTrace(text string) trace {
	var tr trace
	prev := ""
	for line := range strings.Lines(text) {
		t := strings.TrimSpace(line)
		if t == "" {
			continue
		}
		if line[0] == '\t' && strings.Contains(t, ".go:") {
			if fn := goFunc(prev); tr.frame == "" && fn != "" && !goLibrary(fn) {
				tr.frame = fn
			}
			prev = ""
			continue
		}
		if tr.header == "" {
			tr.header = t
		}
		prev = t
	}
	return tr
}

// goFunc is the function of a frame's line, without its arguments:
// "main.(*Ledger).Debit(0xc000012345, 0x2a)" → "main.(*Ledger).Debit".
func goFunc(t string) string {
	t = strings.TrimPrefix(t, "created by ")
	if k := strings.Index(t, " in goroutine "); k >= 0 {
		t = t[:k]
	}
	if !strings.HasSuffix(t, ")") {
		return t
	}
	depth := 0
	for i := len(t) - 1; i >= 0; i-- {
		switch t[i] {
		case ')':
			depth++
		case '(':
			if depth--; depth == 0 {
				return t[:i]
			}
		}
	}
	return t
}

// goStd are the standard library's top-level packages.
var goStd = map[string]bool{
	"archive": true, "bufio": true, "bytes": true, "cmp": true, "compress": true, "container": true, "context": true,
	"crypto": true, "database": true, "debug": true, "embed": true, "encoding": true, "errors": true, "expvar": true,
	"flag": true, "fmt": true, "go": true, "hash": true, "html": true, "image": true, "index": true, "internal": true,
	"io": true, "iter": true, "log": true, "maps": true, "math": true, "mime": true, "net": true, "os": true,
	"path": true, "plugin": true, "reflect": true, "regexp": true, "runtime": true, "slices": true, "sort": true,
	"strconv": true, "strings": true, "structs": true, "sync": true, "syscall": true, "testing": true, "text": true,
	"time": true, "unicode": true, "unique": true, "unsafe": true, "weak": true,
}

// goLibrary: fn is the runtime's, the standard library's or an AMQP
// client's.
func goLibrary(fn string) bool {
	pkg := fn
	if k := strings.LastIndexByte(pkg, '/'); k >= 0 {
		if d := strings.IndexByte(pkg[k:], '.'); d >= 0 {
			pkg = pkg[:k+d]
		}
	} else if d := strings.IndexByte(pkg, '.'); d >= 0 {
		pkg = pkg[:d]
	}
	top, _, _ := strings.Cut(pkg, "/")
	return goStd[top] || strings.HasPrefix(pkg, "github.com/rabbitmq/amqp091-go") ||
		strings.HasPrefix(pkg, "github.com/streadway/amqp") || strings.HasPrefix(pkg, "golang.org/x/")
}
