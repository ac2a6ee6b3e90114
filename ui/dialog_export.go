package ui

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/parkinglot/parkinglot/broker/store"
	"github.com/parkinglot/parkinglot/replay"
)

// exportAction writes copies of the chosen messages to a JSON Lines file;
// the messages stay in the parking lot.
type exportAction struct {
	filePart
}

func newExportDialog(c *common, queue, what string, ids *store.IDSet, n int) *dialog {
	name := fmt.Sprintf("%s-%s.jsonl", strings.NewReplacer("/", "_", " ", "_").Replace(queue), c.now().Format("20060102-150405"))
	a := &exportAction{filePart: newFilePart(filepath.Join(exportFolder(c), name), "type the file to export to",
		func(b Backend, ctx context.Context, req ActionRequest, path string) (replay.Result, error) {
			return b.Export(ctx, req, path)
		})}
	return newDialog(c, queue, what, ids, n).opened(a, dlgConfirm)
}

func (a *exportAction) name() string { return "export" }
func (a *exportAction) verb() string { return "exported" }
func (a *exportAction) title(n int) string {
	return fmt.Sprintf("Export %d message(s)", n)
}

func (a *exportAction) lines(d *dialog, _ int) []string {
	return a.filePart.lines(d, "JSON Lines, lossless; the messages stay in the queue.")
}

// finished remembers the file for an import.
func (a *exportAction) finished(d *dialog) {
	if d.err == nil && d.result.Done > 0 {
		d.c.lastExport = a.file()
	}
}

func (a *exportAction) removes() bool   { return false }
func (a *exportAction) savedTo() string { return a.file() }
