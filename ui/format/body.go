package format

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/parkinglot/parkinglot/broker/body"
)

// The bodies shown as the JSON of the document they hold.
const (
	BodyMessagePack BodyKind = "MessagePack"
	BodyProtobuf    BodyKind = "protobuf"
	BodyAvro        BodyKind = "Avro"
)

// documentKinds are the kinds of body decoded by a format, by format.
var documentKinds = map[body.Format]BodyKind{body.MessagePack: BodyMessagePack, body.Protobuf: BodyProtobuf, body.Avro: BodyAvro}

// ReadableBody is a body as people see it (show, the TUI).
type ReadableBody struct {
	// Kind and Shown are ClassifyBody's of the body with its compression
	// undone; a MessagePack document is Kind BodyMessagePack and Shown as
	// JSON (to be indented like JSON).
	Kind  BodyKind
	Shown []byte
	// Size is how many bytes Shown was taken from (the decompressed
	// size); Cut that they did not all fit.
	Size int
	Cut  bool
	// Notes say, one line each, what was undone to show it, or why it is
	// shown as it is although its properties promised more.
	Notes []string
}

// ReadBody is how d (broker/body's reading of a body whose content type
// is contentType) is shown when at most limit bytes fit (≤ 0: all).
func ReadBody(d body.Decoded, contentType string, limit int) ReadableBody {
	var r ReadableBody
	if d.Compression != "" {
		r.Notes = append(r.Notes, fmt.Sprintf("%s-compressed (%s): %d bytes, %d once decompressed",
			d.Compression, d.CompressionFrom, d.RawSize, len(d.Bytes)))
	}
	if d.Err != nil {
		r.Notes = append(r.Notes, bodyErrorNote(d.Err, contentType))
	}
	if kind, ok := documentKinds[d.Format]; ok {
		if js, err := json.Marshal(body.JSONValue(d.Value)); err == nil && (limit <= 0 || len(js) <= limit) {
			r.Kind, r.Shown, r.Size = kind, js, len(js)
			r.Notes = append(r.Notes, decodedNote(kind, d, contentType))
			if d.Unknown > 0 {
				r.Notes = append(r.Notes, fmt.Sprintf("%d bytes of fields %s does not name (a newer producer than the schema?)", d.Unknown, Name(d.Type)))
			}
			return r
		}
	}
	r.Size = len(d.Bytes)
	r.Cut = limit > 0 && len(d.Bytes) > limit
	r.Kind, r.Shown = ClassifyBody(d.Bytes, contentType, limit)
	return r
}

// formatNames are the formats' names for people.
var formatNames = map[string]string{string(body.JSON): "JSON", string(body.MessagePack): "MessagePack"}

// bodyErrorNote says in one line why a body is shown as it is. The
// producer's values it quotes are made one clean line.
func bodyErrorNote(err error, contentType string) string {
	var e *body.Error
	if !errors.As(err, &e) {
		return Cut(OneLine(err.Error()), 300) + "; shown as it is"
	}
	reason := Cut(OneLine(e.Reason.Error()), 200)
	if errors.Is(e.Kind, body.ErrFormat) {
		name := formatNames[e.What]
		if name == "" {
			name = Name(e.What)
		}
		return fmt.Sprintf("not valid %s (content_type %s): %s; shown as it is", name, Name(contentType), reason)
	}
	if errors.Is(e.Reason, body.ErrUnknownCompression) {
		return fmt.Sprintf("%s %s is not a compression parkinglot reads (gzip, zlib, deflate, bzip2); shown as it is", e.From, Name(e.What))
	}
	return fmt.Sprintf("%s %s: cannot be decompressed: %s; shown as it is", e.From, Name(e.What), reason)
}

// decodedNote says what a decoded body was read as and what chose it.
func decodedNote(kind BodyKind, d body.Decoded, contentType string) string {
	what := string(kind)
	if d.Type != "" {
		what += " " + Name(d.Type)
	}
	from := d.FormatFrom
	switch {
	case d.Framing != "":
		from = d.Framing
	case from == "content_type":
		from = "content_type " + Name(contentType)
	case from == "type":
		from = "the type property"
	case strings.HasPrefix(from, "header "):
		from = "the header " + Name(strings.TrimPrefix(from, "header "))
	}
	return fmt.Sprintf("%s (%s), shown as JSON", what, from)
}
