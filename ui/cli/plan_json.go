package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/parkinglot/parkinglot/replay"
)

// showPlanJSON prints a plan with -o json: the one JSON line WriteJSONLines
// gives a replay.Plan, byte for byte, with its items, refusals and ids not
// found streamed. The pass writes each to a private temporary file; once it has
// succeeded the line is written with them copied from there, so a failed
// pass prints nothing, as before, and a million items are never in memory.
func showPlanJSON(ctx context.Context, f *Factory, s Session, o replay.Options) (replay.Plan, error) {
	items, err := newJSONSpool()
	if err != nil {
		return replay.Plan{}, err
	}
	defer items.remove()
	refused, err := newJSONSpool()
	if err != nil {
		return replay.Plan{}, err
	}
	defer refused.remove()
	missing, err := newJSONSpool()
	if err != nil {
		return replay.Plan{}, err
	}
	defer missing.remove()
	p, err := s.PlanEach(ctx, o, replay.PlanSink{
		Item:    func(it replay.PlanItem) error { return items.add(hintItem(it)) },
		Refused: func(r replay.Failure) error { return refused.add(hintFailure(r)) },
		Missing: func(id string) error { return missing.add(id) },
	})
	if err != nil {
		return p, destinationErr(err)
	}
	var arrays [3]jsonArray
	for i, sp := range []*jsonSpool{items, refused, missing} {
		if arrays[i], err = sp.rewind(); err != nil {
			return p, err
		}
	}
	return p, writePlanLine(f.IOStreams.Out, hintPlan(p), arrays[0], arrays[1], arrays[2])
}

// jsonSpool is a private (0600) temporary file of JSON values, one a line.
// Its name is removed as soon as it is open, as broker/store's files are:
// the open file lives on until remove, so a plan killed midway leaves no
// copy of the messages' ids and errors in the temporary directory.
type jsonSpool struct {
	f    *os.File
	path string // "" once the name is removed
	w    *bufio.Writer
	enc  *json.Encoder
	n    int
}

func newJSONSpool() (*jsonSpool, error) {
	f, err := os.CreateTemp("", "parkinglot-plan-*.jsonl") // 0600
	if err != nil {
		return nil, fmt.Errorf("plan: %w", err)
	}
	j := &jsonSpool{f: f, path: f.Name()}
	// Where the system cannot remove an open file's name, remove does.
	if os.Remove(j.path) == nil {
		j.path = ""
	}
	j.w = bufio.NewWriter(f)
	j.enc = json.NewEncoder(j.w)
	j.enc.SetEscapeHTML(false)
	return j, nil
}

func (j *jsonSpool) add(v any) error {
	j.n++
	return j.enc.Encode(v)
}

// rewind flushes the file and reads it from the start.
func (j *jsonSpool) rewind() (jsonArray, error) {
	if err := j.w.Flush(); err != nil {
		return jsonArray{}, fmt.Errorf("plan: %w", err)
	}
	if _, err := j.f.Seek(0, io.SeekStart); err != nil {
		return jsonArray{}, fmt.Errorf("plan: %w", err)
	}
	return jsonArray{j.n, bufio.NewReader(j.f)}, nil
}

// remove closes the file (freeing its space) and removes its name if it
// is still there.
func (j *jsonSpool) remove() {
	_ = j.f.Close()
	if j.path != "" {
		_ = os.Remove(j.path)
	}
}

// jsonArray is n JSON values, one a line, to be written as an array.
type jsonArray struct {
	n     int
	lines *bufio.Reader
}

// itemsNull is how the plan's items encode when there are none. It comes
// right after the queue, whose name is a JSON string (any quote in it
// escaped), so its first occurrence is the field. The refusals and the
// ids not found, when there are none, are left out (omitempty), and when
// there are they come right after the items, in that order.
var itemsNull = []byte(`,"items":null`)

// writePlanLine writes p (without items, refusals and ids not found) as
// WriteJSONLines would, with those read from their arrays in place.
func writePlanLine(w io.Writer, p replay.Plan, items, refused, missing jsonArray) error {
	p.Items, p.Refused, p.Missing = nil, nil, nil
	var head bytes.Buffer
	enc := json.NewEncoder(&head)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(newPlanJSON(p)); err != nil {
		return err
	}
	at := bytes.Index(head.Bytes(), itemsNull)
	if at < 0 {
		return errors.New("plan: no items field in the encoded plan")
	}
	out := bufio.NewWriter(w)
	out.Write(head.Bytes()[:at])
	if items.n == 0 {
		out.Write(itemsNull)
	} else if err := writeJSONArray(out, "items", items.lines); err != nil {
		return err
	}
	for _, a := range []struct {
		name string
		jsonArray
	}{{"refused", refused}, {"missing", missing}} {
		if a.n == 0 {
			continue
		}
		if err := writeJSONArray(out, a.name, a.lines); err != nil {
			return err
		}
	}
	out.Write(head.Bytes()[at+len(itemsNull):])
	return out.Flush()
}

// writeJSONArray writes `,"name":[…]` with the values read one a line.
func writeJSONArray(out *bufio.Writer, name string, lines *bufio.Reader) error {
	out.WriteString(`,"` + name + `":[`)
	for i := 0; ; i++ {
		line, err := lines.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			// A long value: copy what was read (the next read reuses the
			// buffer), then read the rest of its line.
			head := append([]byte(nil), line...)
			rest, rerr := lines.ReadBytes('\n')
			line, err = append(head, rest...), rerr
		}
		if len(line) > 0 {
			if i > 0 {
				out.WriteByte(',')
			}
			out.Write(bytes.TrimSuffix(line, []byte("\n")))
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("plan: %w", err)
		}
	}
	out.WriteByte(']')
	return nil
}
