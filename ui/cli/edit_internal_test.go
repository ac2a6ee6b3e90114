package cli

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// edit --yes without a terminal and without $VISUAL or $EDITOR refuses the
// vi fallback (vi would wait for keys that never come) in one line, exit 1,
// before anything is dialled; an editor set, or a terminal, goes on.
func TestEditWithoutTerminalRefusesTheViFallback(t *testing.T) {
	errDialled := errors.New("dialled the broker")
	for _, tc := range []struct {
		name     string
		env      map[string]string
		terminal bool
		code     int
		err      string
	}{
		{name: "no editor, no terminal", code: 1, err: "parkinglot: editor: none set, and vi needs a terminal: set $VISUAL or $EDITOR; nothing changed\n"},
		{name: "blank editors, no terminal", env: map[string]string{"VISUAL": " ", "EDITOR": ""}, code: 1, err: "set $VISUAL or $EDITOR"},
		{name: "$EDITOR, no terminal", env: map[string]string{"EDITOR": "ed"}, code: 1, err: errDialled.Error()},
		{name: "$VISUAL, no terminal", env: map[string]string{"VISUAL": "code -w"}, code: 1, err: errDialled.Error()},
		{name: "no editor, a terminal", terminal: true, code: 1, err: errDialled.Error()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, b := testFactory(t)
			f.Getenv = func(k string) string { return tc.env[k] }
			f.IOStreams.SetTerminal(tc.terminal, 80)
			f.OpenSession = func(context.Context, string) (Session, error) { return nil, errDialled }
			code := run(context.Background(), f, []string{"edit", "q", "m1", "--yes"})
			if code != tc.code || !strings.Contains(b.err.String(), tc.err) || strings.Count(b.err.String(), "\n") != 1 {
				t.Errorf("exit %d, stderr %q; want exit %d and one line holding %q", code, b.err.String(), tc.code, tc.err)
			}
		})
	}
}
