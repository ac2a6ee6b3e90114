package ui

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/parkinglot/parkinglot/replay"
)

// importAction publishes an export file back into the queue the dialog
// was opened on — the loop of export, fix the file, import — confirmed and
// mandatory, like `parkinglot import FILE --to :QUEUE`.
type importAction struct {
	filePart
}

// newImportDialog offers the file this session last exported, else the
// export folder.
func newImportDialog(c *common, queue string) *dialog {
	value := c.lastExport
	if value == "" {
		value = exportFolder(c) + string(filepath.Separator)
	}
	a := &importAction{filePart: newFilePart(value, "type the export file to import",
		func(b Backend, ctx context.Context, req ActionRequest, path string) (replay.Result, error) {
			return b.Import(ctx, req, path)
		})}
	return newDialog(c, queue, "the file's messages, back", nil, 1).opened(a, dlgConfirm)
}

func (a *importAction) name() string     { return "import" }
func (a *importAction) verb() string     { return "imported" }
func (a *importAction) title(int) string { return "Import an export file" }

func (a *importAction) lines(d *dialog, _ int) []string {
	return a.filePart.lines(d, fmt.Sprintf("Each message is published to %s, confirmed; the whole file is checked first.", clean(d.queue)))
}

func (a *importAction) removes() bool { return false }
func (a *importAction) adds() bool    { return true }
