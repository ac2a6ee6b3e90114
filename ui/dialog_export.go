package ui

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/parkinglot/parkinglot/broker/store"
	"github.com/parkinglot/parkinglot/replay"
)

// exportAction writes copies of the chosen messages to a JSON Lines file;
// the messages stay in the parking lot.
type exportAction struct {
	actionBase
	path textinput.Model
}

func newExportDialog(c *common, queue, what string, ids *store.IDSet) *dialog {
	a := &exportAction{path: newTextField("", 4096)}
	name := fmt.Sprintf("%s-%s.jsonl", strings.NewReplacer("/", "_", " ", "_").Replace(queue), c.now().Format("20060102-150405"))
	dir := c.exportDir
	if dir == "" {
		dir = "." // shown as ./name: plainly relative to where parkinglot runs
	}
	a.path.SetValue(dir + string(filepath.Separator) + name)
	return newDialog(c, queue, what, ids).opened(a, dlgConfirm)
}

func (a *exportAction) name() string { return "export" }
func (a *exportAction) verb() string { return "exported" }
func (a *exportAction) title(n int) string {
	return fmt.Sprintf("Export %d message(s)", n)
}

func (a *exportAction) fields() []*textinput.Model { return []*textinput.Model{&a.path} }
func (a *exportAction) setWidth(inner int)         { a.path.Width = inner }

func (a *exportAction) check(*dialog) (string, tea.Cmd) {
	if a.savedTo() == "" {
		return "type the file to export to", nil
	}
	return "", nil
}

func (a *exportAction) start(d *dialog, req ActionRequest) (*feed, tea.Cmd) {
	path := a.savedTo()
	return startAction(d.c, req, func(ctx context.Context, req ActionRequest) (replay.Result, error) {
		return d.c.backend.Export(ctx, req, path)
	})
}

func (a *exportAction) lines(d *dialog, _ int) []string {
	if d.state == dlgConfirm {
		return []string{d.field(0, "File", a.path.View()),
			d.c.styles.Dim.Render("JSON Lines, lossless; the messages stay in the queue.")}
	}
	return d.runLines()
}

func (a *exportAction) removes() bool   { return false }
func (a *exportAction) savedTo() string { return strings.TrimSpace(a.path.Value()) }
