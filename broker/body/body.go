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
	None        Format = ""        // not decoded: text or bytes as they are
	JSON        Format = "json"    // by its content type, or an object or an array
	MessagePack Format = "msgpack" // by its content type only: any bytes are some MessagePack
)

// Input is what decides how a body is read.
type Input struct {
	ContentType     string
	ContentEncoding string
	// Compression is the "compression" header kombu and Celery write
	// (application/x-gzip, which is zlib, or application/x-bz2).
	Compression string
	Body        []byte
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

// Decode reads in.Body by its properties.
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
	switch {
	case IsMessagePack(in.ContentType):
		d.Format, d.FormatFrom = MessagePack, "content_type"
		v, err := decodeMessagePack(d.Bytes)
		if err != nil {
			d.Format, d.FormatFrom = None, ""
			d.Err = &Error{Kind: ErrFormat, What: string(MessagePack), From: "content_type", Reason: err}
			return d
		}
		d.Value = v
	case IsJSON(in.ContentType) || looksLikeJSONDocument(d.Bytes):
		var v any
		if err := json.Unmarshal(d.Bytes, &v); err != nil {
			if IsJSON(in.ContentType) {
				d.Err = &Error{Kind: ErrFormat, What: string(JSON), From: "content_type", Reason: err}
			}
			return d
		}
		d.Format, d.Value = JSON, v
		if IsJSON(in.ContentType) {
			d.FormatFrom = "content_type"
		}
	}
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
