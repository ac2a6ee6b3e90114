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
// gives a replay.Plan, byte for byte, with its items streamed. The pass
// writes each item to a private temporary file; once it has succeeded the
// line is written with the items copied from there, so a failed pass
// prints nothing, as before, and a million items are never in memory.
func showPlanJSON(ctx context.Context, f *Factory, s *replay.Session, o replay.Options) (replay.Plan, error) {
	tmp, err := os.CreateTemp("", "parkinglot-plan-*.jsonl") // 0600
	if err != nil {
		return replay.Plan{}, fmt.Errorf("plan: %w", err)
	}
	defer func() { _ = tmp.Close(); _ = os.Remove(tmp.Name()) }()
	bw := bufio.NewWriter(tmp)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	p, err := s.PlanEach(ctx, o, func(it replay.PlanItem) error { return enc.Encode(hintItem(it)) })
	if err != nil {
		return p, destinationErr(err)
	}
	if err := bw.Flush(); err != nil {
		return p, fmt.Errorf("plan: %w", err)
	}
	if _, err := tmp.Seek(0, io.SeekStart); err != nil {
		return p, fmt.Errorf("plan: %w", err)
	}
	return p, writePlanLine(f.IOStreams.Out, hintPlan(p), p.Chosen, bufio.NewReader(tmp))
}

// itemsNull is how the plan's items encode when there are none. It comes
// right after the queue, whose name is a JSON string (any quote in it
// escaped), so its first occurrence is the field.
var itemsNull = []byte(`,"items":null`)

// writePlanLine writes p (without items) as WriteJSONLines would, with n
// items, one JSON object a line, read from items in place of its "items".
func writePlanLine(w io.Writer, p replay.Plan, n int, items *bufio.Reader) error {
	p.Items = nil
	var head bytes.Buffer
	enc := json.NewEncoder(&head)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(p); err != nil {
		return err
	}
	at := bytes.Index(head.Bytes(), itemsNull)
	if at < 0 {
		return errors.New("plan: no items field in the encoded plan")
	}
	out := bufio.NewWriter(w)
	out.Write(head.Bytes()[:at])
	if n == 0 {
		out.Write(itemsNull)
	} else {
		out.WriteString(`,"items":[`)
		for i := 0; ; i++ {
			line, err := items.ReadSlice('\n')
			if errors.Is(err, bufio.ErrBufferFull) {
				// A long item: copy what was read (the next read reuses the
				// buffer), then read the rest of its line.
				head := append([]byte(nil), line...)
				rest, rerr := items.ReadBytes('\n')
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
	}
	out.Write(head.Bytes()[at+len(itemsNull):])
	return out.Flush()
}
