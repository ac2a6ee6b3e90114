package ui

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/parkinglot/parkinglot/replay"
)

// importAction publishes an export file back into the queue the dialog
// was opened on — the loop of export, fix the file, import — confirmed and
// mandatory, like `parkinglot import FILE --to :QUEUE`.
type importAction struct {
	actionBase
	path textinput.Model
}

// newImportDialog offers the file this session last exported, else the
// export folder.
func newImportDialog(c *common, queue string) *dialog {
	a := &importAction{path: newTextField("", 4096)}
	switch {
	case c.lastExport != "":
		a.path.SetValue(c.lastExport)
	case c.exportDir != "":
		a.path.SetValue(c.exportDir + string(filepath.Separator))
	default:
		a.path.SetValue("." + string(filepath.Separator))
	}
	return newDialog(c, queue, "the file's messages, back", nil).opened(a, dlgConfirm)
}

func (a *importAction) name() string { return "import" }
func (a *importAction) verb() string { return "imported" }
func (a *importAction) title(int) string {
	return "Import an export file"
}

func (a *importAction) fields() []*textinput.Model { return []*textinput.Model{&a.path} }
func (a *importAction) setWidth(inner int)         { a.path.Width = inner }

func (a *importAction) check(*dialog) (string, tea.Cmd) {
	if a.file() == "" || strings.HasSuffix(a.file(), string(filepath.Separator)) {
		return "type the export file to import", nil
	}
	return "", nil
}

func (a *importAction) start(d *dialog, req ActionRequest) (*feed, tea.Cmd) {
	path := a.file()
	return startAction(d.c, req, func(ctx context.Context, req ActionRequest) (replay.Result, error) {
		return d.c.backend.Import(ctx, req, path)
	})
}

func (a *importAction) lines(d *dialog, _ int) []string {
	if d.state == dlgConfirm {
		return []string{d.field(0, "File", a.path.View()),
			d.c.styles.Dim.Render(fmt.Sprintf("Each message is published to %s, confirmed; the whole file is checked first.", clean(d.queue)))}
	}
	return d.runLines()
}

func (a *importAction) removes() bool { return false }
func (a *importAction) file() string  { return strings.TrimSpace(a.path.Value()) }
