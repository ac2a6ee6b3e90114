package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/replay"
	"github.com/parkinglot/parkinglot/ui/format"
)

// Confirm asks prompt on out and reads one line from in: only a whole line
// "y" or "yes" proceeds. A partial line cut by end of input, a read error or
// ctx ending first (Ctrl-C) is a "no", never a guess.
func Confirm(ctx context.Context, in io.Reader, out io.Writer, prompt string) (bool, error) {
	if _, err := fmt.Fprint(out, prompt); err != nil {
		return false, err
	}
	type answer struct {
		line string
		err  error
	}
	got := make(chan answer, 1)
	// The read cannot be interrupted; it is left behind on Ctrl-C, when the
	// process is about to exit anyway.
	go func() {
		line, err := bufio.NewReader(in).ReadString('\n')
		got <- answer{line, err}
	}()
	select {
	case <-ctx.Done():
		fmt.Fprintln(out)
		return false, nil
	case a := <-got:
		if a.err != nil {
			fmt.Fprintln(out)
			return false, nil
		}
		s := strings.ToLower(strings.TrimSpace(a.line))
		return s == "y" || s == "yes", nil
	}
}

// WriteJSONLines writes each item as one JSON object per line.
func WriteJSONLines[T any](w io.Writer, items []T) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	for _, it := range items {
		if err := enc.Encode(it); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// ProgressPrinter turns a run's events into output: with JSON, one line per
// message outcome (and notes); on a terminal, a carriage-return updated
// progress line on Err; otherwise nothing until Finish.
type ProgressPrinter struct {
	Verb     string
	JSON     io.Writer // set for -o json
	Terminal io.Writer // set when a person watches (stderr of a terminal)

	mu    sync.Mutex
	bw    *bufio.Writer
	enc   *json.Encoder
	last  time.Time
	drawn bool
}

// Event is the Progress callback.
func (p *ProgressPrinter) Event(e replay.Event) {
	e.Err += failureHints[e.Code]
	if e.Route != nil {
		switch e.Kind {
		case replay.EventDryRun:
			e.Text = format.RouteLine(*e.Route)
		case replay.EventNote:
			e.Text = format.RouteWarning(*e.Route)
		}
	}
	if e.Note != nil {
		e.Text = format.Note(*e.Note)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.JSON != nil {
		switch e.Kind {
		case replay.EventPlanned, replay.EventRateLimit, replay.EventFinished:
		default:
			p.encoder()
			_ = p.enc.Encode(e)
		}
	}
	if p.Terminal != nil && e.Kind != replay.EventPlanned {
		if time.Since(p.last) >= 100*time.Millisecond || e.Kind == replay.EventFinished {
			p.last = time.Now()
			p.drawn = true
			fmt.Fprintf(p.Terminal, "\r\033[K%s", ProgressLine(p.Verb, e))
		}
	}
}

// Line writes v as one JSON line after the events before it, through the
// same buffer (a line written beside it could land inside a half-flushed
// one), and flushes, so a script sees it now.
func (p *ProgressPrinter) Line(v any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.JSON == nil {
		return
	}
	p.encoder()
	_ = p.enc.Encode(v)
	_ = p.bw.Flush()
}

// Flush writes out the JSON events buffered so far.
func (p *ProgressPrinter) Flush() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bw != nil {
		_ = p.bw.Flush()
	}
}

// encoder makes the JSON encoder on first use; p.mu is held.
func (p *ProgressPrinter) encoder() {
	if p.enc == nil {
		p.bw = bufio.NewWriter(p.JSON)
		p.enc = json.NewEncoder(p.bw)
		p.enc.SetEscapeHTML(false)
	}
}

// Finish flushes JSON output and clears the progress line.
func (p *ProgressPrinter) Finish() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bw != nil {
		_ = p.bw.Flush()
	}
	if p.drawn {
		fmt.Fprint(p.Terminal, "\r\033[K")
		p.drawn = false
	}
}

// ResultJSON is the last line `-o json` prints for a run.
type ResultJSON struct {
	Event replay.EventKind `json:"event"`
	replay.Result
	// Pass, Notes and Run are the Result's own with its notes worded; they
	// are its last fields, so the line keeps its order.
	Pass  PassJSON `json:"pass"`
	Notes []string `json:"notes,omitempty"`
	Run   string   `json:"run,omitempty"`
	// Interrupted: the run was stopped by Ctrl-C or SIGTERM (exit 130);
	// StillParked is then the queue's ready count after it.
	Interrupted bool `json:"interrupted,omitempty"`
	StillParked *int `json:"still_parked,omitempty"`
}

// newResultJSON is the -o json line of a finished run.
func newResultJSON(r replay.Result) ResultJSON {
	return ResultJSON{Event: replay.EventFinished, Result: r, Pass: newPassJSON(r.Pass), Notes: resultNotes(r), Run: r.Run}
}

// resultNotes are a run's notes in words: the warnings of its routes
// (a dry run's), then its notes.
func resultNotes(r replay.Result) []string {
	var notes []string
	for _, rp := range r.Routes {
		notes = append(notes, format.RouteWarning(rp))
	}
	return append(notes, format.Notes(r.Notes)...)
}

// PassJSON is a pass's report in -o json, its notes worded (the report's
// last field, so the object keeps its order).
type PassJSON struct {
	broker.PassReport
	Notes []string `json:"notes,omitempty"`
}

func newPassJSON(r broker.PassReport) PassJSON {
	return PassJSON{PassReport: r, Notes: format.PassNotes(r.Notes)}
}

// planJSON is a plan in -o json, its notes worded (the plan's last two
// fields, so the line keeps its order).
type planJSON struct {
	replay.Plan
	Notes  []string `json:"notes,omitempty"`
	Report PassJSON `json:"pass"`
}

func newPlanJSON(p replay.Plan) planJSON {
	return planJSON{Plan: p, Notes: format.Notes(p.Notes), Report: newPassJSON(p.Report)}
}

// statusJSON is a run's status in -o json, its notes worded (its last
// field).
type statusJSON struct {
	replay.RunStatus
	Notes []string `json:"notes,omitempty"`
}

func newStatusJSON(st replay.RunStatus) statusJSON {
	return statusJSON{RunStatus: st, Notes: format.Notes(st.Notes)}
}
