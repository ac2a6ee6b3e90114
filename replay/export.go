package replay

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/parkinglot/parkinglot/broker"
)

// ExportOptions say what to export and where.
type ExportOptions struct {
	Queue  string
	Select Selector // empty: every message
	// File is the export file, created 0600 (an existing file is never
	// overwritten); empty writes to Out.
	File string
	Out  io.Writer
	// Remove acks each message only after its line was written and the
	// file fsynced, and its audit entry is on disk (needs File).
	Remove bool
	// Limit, when > 0, is how many messages are exported at most: the
	// count a person confirmed (new ones arrive at the back).
	Limit    int
	Progress func(Event)
}

// exportLine is one line of an export file: the lossless message (typed
// headers, base64 for bodies that are not UTF-8) and the queue it came
// from, which import uses as the default destination.
type exportLine struct {
	Queue      string          `json:"queue,omitempty"`
	ExportedAt time.Time       `json:"exported_at,omitzero"`
	Message    json.RawMessage `json:"message"`
}

// Export writes the chosen messages as JSON Lines; non-destructive unless
// Remove.
func (s *Session) Export(ctx context.Context, o ExportOptions) (Result, error) {
	if o.Queue == "" {
		return Result{}, fmt.Errorf("%w: no queue given", ErrBadSelection)
	}
	if o.Remove && o.File == "" {
		return Result{}, fmt.Errorf("%w: removing needs a file: a message is removed only once its line is fsynced to a file", ErrBadSelection)
	}
	sel, err := newSelection(o.Select, false, s.Bodies)
	if err != nil {
		return Result{}, err
	}
	defer sel.close()
	var audit *auditLog
	if o.Remove {
		if audit, err = s.openAudit(); err != nil {
			return Result{}, err
		}
		defer audit.Close()
	}
	p, err := s.openPass(ctx, o.Queue, 0)
	if err != nil {
		return Result{}, err
	}
	out, file, err := exportTarget(o)
	if err != nil {
		_, _ = p.Close(context.WithoutCancel(ctx))
		return Result{}, err
	}
	t := newTally(o.Progress)
	w := bufio.NewWriterSize(out, 1<<20)
	name := "export " + o.File
	if file == nil {
		name = "export" // to Out: its error names it
	}
	sync := func() error {
		if err := w.Flush(); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if file != nil {
			if err := file.Sync(); err != nil {
				return fmt.Errorf("%s: fsync: %w", name, err)
			}
		}
		return nil
	}
	var rm *remover
	if o.Remove {
		abs, _ := filepath.Abs(o.File)
		rm = &remover{audit: audit, tally: t, kind: EventExported, before: sync,
			entry: AuditEntry{Action: "export-remove", Queue: o.Queue, File: abs}}
	}
	var written *exported
	if rm == nil {
		written = &exported{w: w, sync: sync, tally: t}
	}
	err = s.exportPass(ctx, p, o.Queue, sel, w, rm, written, t, o.Limit)
	if rm != nil {
		if ferr := rm.flush(); err == nil {
			err = ferr
		}
	} else if serr := written.flush(); err == nil {
		err = serr
	}
	if file != nil {
		if cerr := file.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("export %s: %w", o.File, cerr)
		}
	}
	err = closePass(ctx, p, t, sel, o.Queue, err)
	return t.finish(), err
}

func exportTarget(o ExportOptions) (io.Writer, *os.File, error) {
	if o.File == "" || o.File == "-" {
		if o.Out == nil {
			return nil, nil, errors.New("export: no file and no output")
		}
		return o.Out, nil, nil
	}
	// O_EXCL: an export is often the only copy of what Remove takes out
	// of the queue; never overwrite one.
	f, err := os.OpenFile(o.File, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, os.ErrExist) {
		return nil, nil, fmt.Errorf("export: %s already exists%w", o.File, errExists)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("export: %w", err)
	}
	if o.Remove {
		// The file's fsync makes its data durable, not its name: the
		// folder is synced too before anything is removed.
		if err := syncDir(filepath.Dir(o.File)); err != nil {
			_ = f.Close()
			_ = os.Remove(o.File)
			return nil, nil, fmt.Errorf("export %s: fsync its folder: %w", o.File, err)
		}
	}
	return f, f, nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// exported counts a plain export's messages as done once their lines are
// out of the buffer (a closed pipe, `export Q | head`, fails the write:
// what was still buffered was not exported).
type exported struct {
	w       *bufio.Writer
	sync    func() error
	tally   *tally
	pending []string
}

// flushAt is how much a plain export buffers before it writes and counts.
const flushAt = 256 << 10

func (e *exported) add(id string) error {
	e.pending = append(e.pending, id)
	if e.w.Buffered() < flushAt {
		return nil
	}
	return e.flush()
}

func (e *exported) flush() error {
	if err := e.sync(); err != nil {
		e.pending = nil
		return err
	}
	for _, id := range e.pending {
		e.tally.done(EventExported, id, nil, "", nil)
	}
	e.pending = e.pending[:0]
	return nil
}

func (s *Session) exportPass(ctx context.Context, p *broker.Pass, queue string, sel *selection, w *bufio.Writer, rm *remover, written *exported, t *tally, limit int) error {
	n := 0
	now := time.Now()
	qjson, _ := json.Marshal(queue)
	wk := walk{queue: queue, sel: sel, q: s.originQuery(ctx, queue, nil), skip: func(id string, err error) { t.skipped(id, err.Error()) }}
	for c, err := range wk.chosen(ctx, p) {
		if err != nil {
			return err
		}
		if sel.reached(n, limit) { // one more than the limit: the rest is given back
			return nil
		}
		n++
		h, id := c.held, c.id
		t.chosen(id)
		msg, err := h.Message.MarshalJSON() // not json.Marshal: its error would name Go types
		if err != nil {
			t.failed(id, err, nil, "")
			continue
		}
		// Written by hand: json.Marshal would re-validate and copy the
		// message (up to 16 MiB) once more.
		_, _ = w.WriteString(`{"queue":`)
		_, _ = w.Write(qjson)
		_, _ = w.WriteString(`,"exported_at":"` + now.UTC().Format(time.RFC3339) + `","message":`)
		_, _ = w.Write(msg)
		if _, err := w.WriteString("}\n"); err != nil {
			return fmt.Errorf("export: %w", err)
		}
		if rm == nil {
			if err := written.add(id); err != nil {
				return err
			}
			continue
		}
		if err := rm.add(h, id); err != nil {
			return err
		}
	}
	return nil
}

// errExists marks an export file that is already there (errors.Is
// fs.ErrExist); its text is empty, so the error reads "export: F already
// exists".
var errExists = existsError{}

type existsError struct{}

func (existsError) Error() string { return "" }
func (existsError) Unwrap() error { return fs.ErrExist }
