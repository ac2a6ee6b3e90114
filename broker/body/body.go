// Package body reads a message body the way its producer wrote it: it
// undoes the compression a content_encoding (or kombu's and Celery's
// "compression" header) names and decodes the formats it knows (JSON,
// MessagePack) into plain values a filter can compare. It never changes
// the message: export and replay carry the raw bytes.
package body

import (
	"bytes"
	"compress/bzip2"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Format is what a body was decoded from.
type Format string

// The formats read.
const (
	None        Format = ""         // not decoded: text or bytes as they are
	JSON        Format = "json"     // by its content type, or an object or an array
	MessagePack Format = "msgpack"  // by its content type only: any bytes are some MessagePack
	Protobuf    Format = "protobuf" // with a message type of the schemas loaded
	Avro        Format = "avro"     // with a schema loaded: named, or by the body's framing
)

// Rule says how a body is read where its properties do not say: the
// config's decode for its queue, or a flag. From names the rule for show.
type Rule struct {
	Format Format
	Type   string // a protobuf message's full name; an Avro schema's full or file name
	From   string
}

// Input is what decides how a body is read.
type Input struct {
	ContentType     string
	ContentEncoding string
	// Compression is the "compression" header kombu and Celery write
	// (application/x-gzip, which is zlib, or application/x-bz2).
	Compression string
	// Type is the AMQP type property, or the header a team names it in
	// (TypeFrom: "type" when empty, or "header NAME"): a protobuf
	// message's or an Avro schema's full name where the producer says
	// there which it sent.
	Type     string
	TypeFrom string
	Body     []byte
	// Rule reads a body whose properties do not say how; Schemas decode
	// protobuf and Avro.
	Rule    Rule
	Schemas *Schemas
	// textOnly: only Decoded.Text is wanted; a JSON body is not parsed.
	textOnly bool
}

// Decoded is a body as read.
type Decoded struct {
	// Compression is the compression undone ("gzip", "zlib", "deflate",
	// "bzip2"; "" for none), CompressionFrom the property or header that
	// named it ("content_encoding", "compression").
	Compression     string
	CompressionFrom string
	// Format is what Bytes were decoded from; FormatFrom says what chose
	// it: "content_type", or "" when a JSON body said so itself.
	Format     Format
	FormatFrom string
	// Bytes is the body with its compression undone (the raw body when
	// there was none, or it could not be undone); RawSize the raw body's
	// length.
	Bytes   []byte
	RawSize int
	// Type is the protobuf message or Avro schema decoded with; Framing
	// the Avro framing that named its schema ("Confluent schema id 7",
	// "single-object encoding"); Unknown the bytes of protobuf fields the
	// schema does not name (a newer producer).
	Type    string
	Framing string
	Unknown int
	// Value is the decoded document for JSON and MessagePack: maps with
	// string keys, slices, strings, float64 (JSON) or int and float64
	// (MessagePack), bools, nil, time.Time (MessagePack timestamps) and
	// []byte (MessagePack binary that is not UTF-8).
	Value any
	// Err says why the body is shown as it is although its properties
	// promised more: ErrCompression or ErrFormat wrapped with the
	// reason. A body that does not decode is no failure of anything else.
	Err error
}

// Typed reasons a body is not read as its properties say.
var (
	ErrCompression = errors.New("the body's compression cannot be undone")
	ErrFormat      = errors.New("the body does not decode as its content type says")
)

// ErrUnknownCompression is the Reason of a compression this package does
// not read.
var ErrUnknownCompression = errors.New("not a compression this reads")

// Error is why a body is not read as its properties say: Kind is
// ErrCompression or ErrFormat, What the compression or format, From the
// property or header that named it, Reason the decoder's error.
type Error struct {
	Kind   error
	What   string
	From   string
	Reason error
}

func (e *Error) Error() string {
	return fmt.Sprintf("%v (%s %s): %v", e.Kind, e.From, e.What, e.Reason)
}

func (e *Error) Unwrap() []error { return []error{e.Kind, e.Reason} }

// MaxDecompressed bounds what a compressed body may grow to (a small body
// that inflates without end must not take the memory).
const MaxDecompressed = 64 << 20

// Decode reads in.Body by its properties, else by in.Rule (choose).
func Decode(in Input) Decoded {
	d := Decoded{Bytes: in.Body, RawSize: len(in.Body)}
	if c, from := compressionOf(in); c != "" {
		d.CompressionFrom = from
		raw, algo, err := decompress(c, in.Body)
		if err != nil {
			d.Err = &Error{Kind: ErrCompression, What: c, From: from, Reason: err}
			return d
		}
		d.Compression, d.Bytes = algo, raw
	}
	c := choose(in, d.Bytes)
	fail := func(err error) Decoded {
		d.Err = &Error{Kind: ErrFormat, What: string(c.Format), From: c.From, Reason: err}
		return d
	}
	var v any
	switch c.Format {
	case Protobuf:
		if c.Type == "" {
			return fail(errors.New("no message type: give it in the content type (messageType=pkg.Msg), the type property, the config's decode or --message-type"))
		}
		md, ok := in.Schemas.message(c.Type)
		if !ok {
			return fail(fmt.Errorf("no message %s in the schemas loaded (--proto, decode.proto)", c.Type))
		}
		pv, unknown, err := decodeProtobuf(in.Schemas, md, d.Bytes)
		if err != nil {
			return fail(err)
		}
		v, d.Unknown = pv, unknown
	case Avro:
		sc, datum, framing := in.Schemas.avroFraming(d.Bytes)
		if sc == nil {
			if c.Type == "" {
				return fail(errors.New("no schema: give it in the content type (schema=…), the config's decode or --avro-schema"))
			}
			var ok bool
			if sc, ok = in.Schemas.avroSchema(c.Type); !ok {
				return fail(fmt.Errorf("no Avro schema %s loaded (--avro-schema, decode.avro_schema)", c.Type))
			}
		} else {
			c.Type, d.Framing = schemaName(sc), framing
		}
		av, err := decodeAvro(sc, datum)
		if err != nil {
			return fail(err)
		}
		v = av
	case MessagePack:
		mv, err := decodeMessagePack(d.Bytes)
		if err != nil {
			return fail(err)
		}
		v = mv
	case JSON:
		if in.textOnly {
			return d
		}
		if err := json.Unmarshal(d.Bytes, &v); err != nil {
			if c.From == "" { // it only looked like JSON
				return d
			}
			return fail(err)
		}
	default:
		return d
	}
	d.Format, d.FormatFrom, d.Type, d.Value = c.Format, c.From, c.Type, v
	return d
}

// IsJSON reports a JSON content type: application/json, text/json,
// application/vnd.x+json ….
func IsJSON(contentType string) bool {
	return strings.Contains(strings.ToLower(contentType), "json")
}

// IsMessagePack reports a MessagePack content type: application/msgpack,
// application/x-msgpack (kombu, Celery), application/vnd.msgpack ….
func IsMessagePack(contentType string) bool {
	ct := strings.ToLower(contentType)
	return strings.Contains(ct, "msgpack") || strings.Contains(ct, "messagepack")
}

func looksLikeJSONDocument(b []byte) bool {
	b = bytes.TrimLeft(b, " \t\r\n")
	return len(b) > 0 && (b[0] == '{' || b[0] == '[')
}

// compressionOf names the compression a body's properties announce and
// where: a content_encoding that is a compression (not a charset such as
// kombu's "utf-8"), else the compression header.
func compressionOf(in Input) (string, string) {
	if c := normalCompression(in.ContentEncoding); c != "" {
		return c, "content_encoding"
	}
	if c := normalCompression(in.Compression); c != "" {
		return c, "compression"
	}
	return "", ""
}

// normalCompression: "" for none or a charset, else a compression's name
// (one this package may not know: decompress says so).
func normalCompression(v string) string {
	v = strings.ToLower(strings.TrimSpace(v))
	v = strings.TrimPrefix(v, "application/")
	v = strings.TrimPrefix(v, "x-")
	switch v {
	case "", "identity", "utf-8", "utf8", "ascii", "us-ascii", "latin-1", "latin1", "iso-8859-1", "binary", "7bit", "8bit", "none":
		return ""
	case "gzip", "zlib", "deflate":
		return "gzip" // told apart by their bytes (decompress)
	case "bz2", "bzip2", "bzip":
		return "bzip2"
	}
	return v
}

// decompress undoes c. The three deflate wrappings are told apart by the
// bytes: kombu's "application/x-gzip" is zlib, HTTP's "deflate" is zlib
// or raw deflate in practice.
func decompress(c string, b []byte) ([]byte, string, error) {
	var r io.Reader
	algo := c
	switch c {
	case "gzip":
		switch {
		case len(b) >= 2 && b[0] == 0x1f && b[1] == 0x8b:
			zr, err := gzip.NewReader(bytes.NewReader(b))
			if err != nil {
				return nil, "", err
			}
			r = zr
		case len(b) >= 2 && b[0]&0x0f == 8 && (int(b[0])<<8|int(b[1]))%31 == 0:
			zr, err := zlib.NewReader(bytes.NewReader(b))
			if err != nil {
				return nil, "", err
			}
			r, algo = zr, "zlib"
		default:
			r, algo = flate.NewReader(bytes.NewReader(b)), "deflate"
		}
	case "bzip2":
		r = bzip2.NewReader(bytes.NewReader(b))
	default:
		return nil, "", fmt.Errorf("%w (gzip, zlib, deflate, bzip2 are)", ErrUnknownCompression)
	}
	out, err := io.ReadAll(io.LimitReader(r, MaxDecompressed+1))
	if err != nil {
		return nil, "", err
	}
	if len(out) > MaxDecompressed {
		return nil, "", fmt.Errorf("it inflates past %d MiB", MaxDecompressed>>20)
	}
	return out, algo, nil
}
