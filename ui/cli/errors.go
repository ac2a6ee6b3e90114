package cli

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/spf13/cobra"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/replay"
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
func ExitCode(err error) int {
	var ue *UsageError
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &ue), errors.Is(err, ErrNeedsConfirmation), errors.Is(err, ErrDeclined):
		return ExitUsage
	case errors.Is(err, replay.ErrCameBack):
		return ExitCameBack
	case errors.Is(err, replay.ErrNotAllDone):
		return ExitPartial
	case errors.Is(err, context.Canceled):
		return ExitInterrupted
	}
	return ExitError
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
	for _, h := range connectionHints {
		if errors.Is(err, h.err) {
			return h.hint
		}
	}
	return ""
}
