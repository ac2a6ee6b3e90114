// Package editor is the one rule for the editor a person edits a parked
// message in, shared by the TUI and the command line.
package editor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// ErrEditor: the editor is missing or failed; nothing was changed.
var ErrEditor = errors.New("editor")

// Default is the editor used when neither $VISUAL nor $EDITOR is set.
const Default = "vi"

// Name is the one editor rule, for the CLI and the TUI alike: $VISUAL,
// then $EDITOR (either may carry arguments, "code -w"), then vi.
func Name() string {
	e, _ := FromEnv(os.Getenv)
	return e
}

// FromEnv is Name with the environment read by getenv; fallback is
// true when neither variable is set and the editor is Default, which
// needs a terminal.
func FromEnv(getenv func(string) string) (editor string, fallback bool) {
	for _, v := range []string{"VISUAL", "EDITOR"} {
		if e := strings.TrimSpace(getenv(v)); e != "" {
			return e, false
		}
	}
	return Default, true
}

// Command is the command that edits path with Name(). An editor
// that is not found is an error wrapping ErrEditor.
func Command(ctx context.Context, path string) (*exec.Cmd, error) {
	args := strings.Fields(Name())
	bin, err := exec.LookPath(args[0])
	if err != nil {
		return nil, fmt.Errorf("%w: editor %q not found; nothing changed", ErrEditor, args[0])
	}
	cmd := exec.CommandContext(ctx, bin, append(args[1:], path)...)
	return cmd, nil
}

// Failed wraps an editor's exit error.
func Failed(cmd *exec.Cmd, err error) error {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return fmt.Errorf("%w: %s exited with status %d; nothing changed", ErrEditor, cmd.Path, ee.ExitCode())
	}
	return fmt.Errorf("%w: %s: %v; nothing changed", ErrEditor, cmd.Path, err)
}
