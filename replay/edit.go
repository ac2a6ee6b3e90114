package replay

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"os"
	"strings"

	"github.com/parkinglot/parkinglot/broker"
	"github.com/parkinglot/parkinglot/broker/body"
)

// EditDraft is a parked message whose body is being edited in a file.
type EditDraft struct {
	Queue       string
	ID          string
	Path        string // the body, in a 0600 temporary file
	ContentType string
	Original    broker.Message
	Summary     Summary
	// Decoded is the body as the editor got it when it is a document
	// (MessagePack, protobuf, Avro: as JSON) or compressed text, and
	// Shown exactly what the draft held; Check encodes the edit back
	// with schemas. Nil: the raw body was written.
	Decoded *body.Decoded
	Shown   []byte
	schemas *body.Schemas
}

// PrepareEdit finds a parked message (giving everything back) and writes
// its body to a private temporary file for the editor. The TUI runs the
// editor itself (EditorCommand); FinishEdit or Discard removes the file.
func (s *Session) PrepareEdit(ctx context.Context, queue, id string) (*EditDraft, error) {
	m, sum, err := s.Find(ctx, queue, id)
	if err != nil {
		return nil, err
	}
	text, ext := m.Body, ".txt"
	var decoded *body.Decoded
	if dec := s.Bodies.Read(queue, m); body.Editable(dec) {
		decoded, text = &dec, dec.Bytes
		if dec.Format == body.MessagePack || dec.Format == body.Protobuf || dec.Format == body.Avro {
			if text, err = json.MarshalIndent(body.JSONValue(dec.Value), "", "  "); err != nil {
				return nil, fmt.Errorf("edit: %w", err)
			}
			text = append(text, '\n')
		}
	}
	switch {
	case IsJSON(m.Properties.ContentType), decoded != nil && decoded.Format != body.None:
		ext = ".json"
	case !bytes.Equal(bytes.ToValidUTF8(text, nil), text):
		ext = ".bin"
	}
	f, err := os.CreateTemp("", "parkinglot-edit-*"+ext)
	if err != nil {
		return nil, fmt.Errorf("edit: %w", err)
	}
	d := &EditDraft{Queue: queue, ID: id, Path: f.Name(), ContentType: m.Properties.ContentType, Original: m, Summary: sum,
		Decoded: decoded, Shown: text}
	if s.Bodies != nil {
		d.schemas = s.Bodies.Schemas
	}
	if err := f.Chmod(0o600); err == nil {
		_, err = f.Write(text)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = d.Discard()
		return nil, fmt.Errorf("edit: %w", err)
	}
	return d, nil
}

// Discard removes the draft's file.
func (d *EditDraft) Discard() error {
	err := os.Remove(d.Path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return err
}

// Check reads the edited body and validates it: JSON when the content type
// says so; a decoded document or decompressed text is encoded back in its
// format and compression (an unedited draft gives the original bytes). An
// invalid body is an error wrapping ErrInvalidBody.
func (d *EditDraft) Check() ([]byte, error) {
	edited, err := os.ReadFile(d.Path)
	if err != nil {
		return nil, fmt.Errorf("edit: read %s: %w", d.Path, err)
	}
	if d.Decoded != nil {
		if bytes.Equal(edited, d.Shown) { // unedited: the producer's bytes, as they were
			return d.Original.Body, nil
		}
		out, err := body.Encode(d.schemas, *d.Decoded, d.Original.Body, edited)
		if err != nil {
			return nil, fmt.Errorf("%w: %w; nothing sent, %s is still parked", ErrInvalidBody, err, d.ID)
		}
		return out, nil
	}
	if IsJSON(d.ContentType) {
		var v any
		if err := json.Unmarshal(edited, &v); err != nil {
			return nil, fmt.Errorf("%w: the edited body is not valid JSON (%s); nothing sent, %s is still parked", ErrInvalidBody, jsonWhere(edited, err), d.ID)
		}
	}
	return edited, nil
}

// Changed reports whether the edited body differs from the original.
func (d *EditDraft) Changed(body []byte) bool { return !bytes.Equal(body, d.Original.Body) }

func jsonWhere(body []byte, err error) string {
	var se *json.SyntaxError
	if !errors.As(err, &se) {
		return err.Error()
	}
	off := int(se.Offset)
	if off > len(body) {
		off = len(body)
	}
	line := 1 + bytes.Count(body[:off], []byte("\n"))
	col := off - bytes.LastIndexByte(body[:off], '\n')
	return fmt.Sprintf("line %d, column %d: %v", line, col, err)
}

// IsJSON reports whether a content type is JSON (application/json,
// text/json, application/*+json).
func IsJSON(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		mt = strings.ToLower(strings.TrimSpace(contentType))
	}
	return mt == "application/json" || mt == "text/json" || strings.HasSuffix(mt, "+json")
}

// FinishEdit validates the edited body and replays the edited message (to
// its origin, or o.To / o.Target; o.Queue and o.Select are the draft's). A
// body invalid for its content type is an error: nothing sent, the message
// still parked. The draft's file is removed in every case.
func (s *Session) FinishEdit(ctx context.Context, d *EditDraft, o Options) (Result, error) {
	defer func() { _ = d.Discard() }()
	edited, err := d.Check()
	if err != nil {
		return Result{}, err
	}
	o.Queue, o.Select, o.DryRun = d.Queue, Selector{IDs: []string{d.ID}}, false
	if err := o.check(); err != nil {
		return Result{}, err
	}
	sel, err := newSelection(o.Select, true, s.Bodies)
	if err != nil {
		return Result{}, err
	}
	defer sel.close()
	r, err := s.newRun(EventReplayed, 0, 1, o.Progress)
	if err != nil {
		return Result{}, err
	}
	defer r.close()
	base := replayPrepare(d.Queue, o.Target, "edit")
	prepare := func(h *broker.Held, sum Summary, rid string) (*job, error) {
		if !bytes.Equal(h.Body, d.Original.Body) {
			return nil, fmt.Errorf("the parked message %s changed since it was opened for editing; nothing sent", d.ID)
		}
		j, err := base(h, sum, rid)
		if err != nil {
			return nil, err
		}
		j.pub.Body = edited
		return j, nil
	}
	err = s.replayPasses(ctx, r, d.Queue, sel, s.originQuery(ctx, d.Queue, o.To), prepare)
	r.leftovers()
	return r.tally.finish(), err
}
