package ui

import (
	"context"
	"path/filepath"
	"strings"

	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/parkinglot/parkinglot/replay"
)

// filePart is what export and import share: one field, the file, and an
// action that runs with it; the hooks it does not set are actionBase's.
type filePart struct {
	actionBase
	path    textinput.Model
	missing string // the problem when no file is typed
	run     func(b Backend, ctx context.Context, req ActionRequest, path string) (replay.Result, error)
}

func newFilePart(value, missing string, run func(Backend, context.Context, ActionRequest, string) (replay.Result, error)) filePart {
	f := filePart{path: newTextField("", 4096), missing: missing, run: run}
	f.path.SetValue(value)
	return f
}

func (f *filePart) fields() []*textinput.Model { return []*textinput.Model{&f.path} }
func (f *filePart) setWidth(inner int)         { f.path.Width = inner }

// file is the path typed, absolute, "" when none (or only a folder): a
// name alone is in the working directory, and the result says which.
func (f *filePart) file() string {
	p := strings.TrimSpace(f.path.Value())
	if p == "" || strings.HasSuffix(p, string(filepath.Separator)) {
		return ""
	}
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return p
}

// exportFolder is where exports go unless a file is typed: the configured
// folder, else the working directory, as an absolute path so that the
// dialog and the result say where the file is.
func exportFolder(c *common) string {
	dir := c.exportDir
	if dir == "" {
		dir = "."
	}
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	return dir
}

func (f *filePart) check(*dialog) (string, tea.Cmd) {
	if f.file() == "" {
		return f.missing, nil
	}
	return "", nil
}

func (f *filePart) start(d *dialog, req ActionRequest) (*feed, tea.Cmd) {
	path := f.file()
	return startAction(d.c, req, func(ctx context.Context, req ActionRequest) (replay.Result, error) {
		return f.run(d.c.backend, ctx, req, path)
	})
}

// lines are the field and a note while confirming, the shared progress
// and outcome after.
func (f *filePart) lines(d *dialog, note string) []string {
	if d.state == dlgConfirm {
		return []string{d.field(0, "File", f.path.View()), d.c.styles.Dim.Render(note)}
	}
	return d.runLines()
}
