package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"regexp"
	"slices"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/replay"
	"github.com/parkinglot/parkinglot/retrycore"
	"github.com/parkinglot/parkinglot/ui/format"
)

// Exit statuses: a contract with scripts, so a number never changes
// meaning. 130 (ExitInterrupted) is the shell's for SIGINT.
const (
	ExitOK      = 0
	ExitError   = 1
	ExitUsage   = 2
	ExitPartial = 3
	// ExitCameBack: a canary replay stopped because messages it replayed
	// came back to the parking lot; the rest stay parked.
	ExitCameBack = 4
	// ExitClosedOutput: stdout was closed (`list Q | head`). SIGPIPE is
	// ignored so that the command gives back what it held; it then exits
	// as a shell reports a process SIGPIPE killed (128+13), saying nothing.
	ExitClosedOutput = 141
)

// UsageError is bad command-line use: a wrong flag, argument or
// combination (exit 2).
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

func usagef(format string, args ...any) error {
	return &UsageError{fmt.Errorf(format, args...)}
}

// ExitCode maps a command's error to the exit status, by its type only.
// A URL that cannot be used is bad input, like a bad flag or config key.
func ExitCode(err error) int {
	var ue *UsageError
	switch {
	case err == nil:
		return ExitOK
	case closedStdout(err):
		return ExitClosedOutput
	case errors.As(err, &ue), errors.Is(err, ErrNeedsConfirmation), errors.Is(err, ErrDeclined), errors.Is(err, broker.ErrBadURL):
		return ExitUsage
	case errors.Is(err, replay.ErrCameBack):
		return ExitCameBack
	case errors.Is(err, replay.ErrNotAllDone), errors.Is(err, retrycore.ErrKept):
		return ExitPartial
	case errors.Is(err, context.Canceled):
		return ExitInterrupted
	}
	return ExitError
}

// closedStdout: err is a write to the process's stdout that the reader
// closed. Only stdout: a broken pipe to the broker or to a handler is an
// error like any other.
func closedStdout(err error) bool {
	var pe *fs.PathError
	return errors.As(err, &pe) && pe.Path == os.Stdout.Name() && errors.Is(pe.Err, syscall.EPIPE)
}

// usageArgs makes cobra's argument validators return a UsageError.
func usageArgs(v cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := v(cmd, args); err != nil {
			return &UsageError{err}
		}
		return nil
	}
}

var (
	noArgs = usageArgs(cobra.NoArgs)
	oneArg = usageArgs(cobra.ExactArgs(1))
)

func exactArgs(n int) cobra.PositionalArgs { return usageArgs(cobra.ExactArgs(n)) }

// subcommandArgs is the Args of a command that groups others (the root,
// topology, completion): an argument is a mistyped command, answered with
// cobra's suggestions on one line (cobra words them on three, and only for
// a root without Args of its own).
func subcommandArgs(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	what := fmt.Sprintf("unknown command %q", args[0])
	if cmd.HasParent() {
		what += fmt.Sprintf(" for %q", cmd.CommandPath())
	}
	if cmd.SuggestionsMinimumDistance <= 0 {
		cmd.SuggestionsMinimumDistance = 2 // cobra's default, set only on its own path
	}
	if s := closest(args[0], cmd.SuggestionsFor(args[0])); len(s) > 0 {
		return usagef("%s; did you mean %s?", what, quoteOr(s))
	}
	return usagef("%s (%s --help lists them)", what, cmd.CommandPath())
}

// closest keeps the names nearest to typed, counting a swap of two
// letters as one edit: cobra offers "edit" and "list" for "lsit".
func closest(typed string, names []string) []string {
	var best []string
	bestD := -1
	for _, n := range names {
		d := editDistance(strings.ToLower(typed), strings.ToLower(n))
		switch {
		case bestD < 0 || d < bestD:
			best, bestD = []string{n}, d
		case d == bestD && !slices.Contains(best, n):
			best = append(best, n)
		}
	}
	return best
}

// editDistance is the optimal string alignment distance: insertions,
// deletions, substitutions and swaps of neighbours, each one edit.
func editDistance(a, b string) int {
	s, t := []rune(a), []rune(b)
	d := make([][]int, len(s)+1)
	for i := range d {
		d[i] = make([]int, len(t)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(s); i++ {
		for j := 1; j <= len(t); j++ {
			cost := 1
			if s[i-1] == t[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && s[i-1] == t[j-2] && s[i-2] == t[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(s)][len(t)]
}

// quoteOr is `"a"`, `"a" or "b"`, `"a", "b" or "c"`.
func quoteOr(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	if len(q) == 1 {
		return q[0]
	}
	return strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
}

// flagError is the root's flag error func: every flag pflag cannot parse
// is a usage error, worded without Go's function names.
func flagError(_ *cobra.Command, err error) error {
	return &UsageError{flagProblem(err)}
}

// flagValue matches pflag's text for a value it cannot parse, which quotes
// Go's strconv error: `invalid argument "abc" for "--limit" flag:
// strconv.ParseInt: parsing "abc": invalid syntax`.
var flagValue = regexp.MustCompile(`^(invalid argument ".*" for ".*" flag): strconv\.Parse(Int|Uint|Float|Bool)(?:: parsing ".*")?: (.*)$`)

// flagProblem words a flag value error without Go's function names (the
// error stays a usage error by its type; the text is only reworded).
func flagProblem(err error) error {
	m := flagValue.FindStringSubmatch(err.Error())
	if m == nil {
		return err
	}
	want := map[string]string{"Int": "a whole number", "Uint": "a whole number of 0 or more", "Float": "a number", "Bool": "true or false"}[m[2]]
	if strings.Contains(m[3], "out of range") {
		want += " in range"
	}
	return fmt.Errorf("%s: want %s", m[1], want)
}

// cliErr makes the engine's selection and filter errors usage errors
// (exit 2), naming the flag that mends them.
func cliErr(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, replay.ErrBadFilter) || errors.Is(err, replay.ErrBadSelection) {
		return &UsageError{err}
	}
	return err
}

// connectionHints are what mends a connection problem on the command line,
// by the engine's typed error: the engines name no flag.
var connectionHints = []struct {
	err  error
	hint string
}{
	{broker.ErrEmptyURL, " (set --url or PARKINGLOT_URL)"},
	{broker.ErrNoManagement, " (enable rabbitmq_management or pass --management-url)"},
	{broker.ErrCertNotTrusted, " (pass --tls-ca)"},
	{broker.ErrCertWithoutKey, " (--tls-cert and --tls-key)"},
}

// errorLine is the one line an error ends a command with: its first line
// and the flag that mends it.
func errorLine(err error) string {
	text := err.Error()
	var nad *replay.NotAllDoneError
	if errors.As(err, &nad) && nad.Reason != "" {
		// A failure's reason can be long and span lines: its first 300
		// cells, on the one line.
		text = strings.Replace(text, nad.Reason, format.Cut(format.OneLine(nad.Reason), 300), 1)
	}
	return firstLine(text) + hintFor(err)
}

// hintFor is the flag that mends err, "" when no flag does.
func hintFor(err error) string {
	var npe *broker.NoPasswordError
	if errors.As(err, &npe) {
		return " (write it in the URL, or set PARKINGLOT_PASSWORD_FILE, or the context's password_file or password_command)"
	}
	for _, h := range connectionHints {
		if errors.Is(err, h.err) {
			return h.hint
		}
	}
	return ""
}
